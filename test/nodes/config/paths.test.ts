/**
 * Configurable paths and `percentCurtailment` of the config node: each of the four
 * paths takes effect (devices: device read and the admin pickers; sites: the admin pickers and
 * the client; curtailment: the site-steer node and the client; grid limits: the client), on a
 * counting server that answers only the configured paths below its base path. A bad path is
 * reported by the config node at deploy and fails every node using it, with the runtime's
 * message, nothing sent; the editor checks with the very same rules (resources/paths.js and
 * resources/request-path.js, built from src by `npm run build`) and words refusals the same.
 */
import assert from 'node:assert/strict';
import { DEFAULT_PATHS } from '../../../src/protocol/paths';
import { startCounting, type CountingServer, type Seen } from '../../helpers/counting-server';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { callsOf, cfg, flow, helper, loadFlow, siteSteer, useRuntime, useSimulator } from '../../helpers/red';

const SITE = 'ste_a';
const PATHS = {
  pathDevices: '/inv/devices',
  pathSites: '/inv/sites',
  pathCurtailment: '/ctl/<site>/curtail',
  pathGridLimits: '/ctl/<site>/limits',
};
const devices = [{ deviceReference: 'dvc_a', properties: [{ name: 'soc', unit: '%' }] }];
const sites = {
  sites: [
    { siteReference: SITE, name: 'A', devices: [{ deviceReference: 'dvc_a', kind: 'battery' }], pvPeakPower: 100_000 },
  ],
};

/** Answers the configured paths below /base only; 404 elsewhere. */
function service(r: Seen) {
  const url = r.url.split('?')[0];
  if (r.method === 'GET' && url === '/base/inv/devices') return { body: devices };
  if (r.method === 'GET' && url === '/base/inv/sites') return { body: sites };
  if (r.method === 'POST' && (url === `/base/ctl/${SITE}/curtail` || url === `/base/ctl/${SITE}/limits`))
    return { body: { ...JSON.parse(r.body), requestId: 'req_1' } };
  return { status: 404, body: { message: `no route ${r.method} ${url}` } };
}

describe('config node: configurable paths and % curtailment', () => {
  describe('in Node-RED, on a service with other paths', () => {
    let srv: CountingServer;
    before(async () => {
      srv = await startCounting(service);
    });
    after(async () => {
      await srv.close();
    });
    beforeEach(() => {
      srv.requests.length = 0;
    });
    useRuntime();
    const seen = () => srv.requests.map((r) => `${r.method} ${r.url}`);
    const config = (extra: Record<string, unknown> = {}) => cfg(`${srv.url}/base`, { ...PATHS, ...extra });

    it('pathDevices: device read (devices mode) and the admin device picker, deployed and unsaved, list from it', async () => {
      const loaded = await loadFlow(flow({ type: 'ems-device-read', mode: 'devices' }, config()));
      assert.deepEqual(
        (await loaded.ask()).payload.map((d: any) => d.deviceReference),
        ['dvc_a'],
      );
      const byId = await helper.request().post('/ems-partner/devices').send({ server: 'cfg' }).expect(200);
      assert.deepEqual(
        byId.body.map((d: any) => d.deviceReference),
        ['dvc_a'],
      );
      const unsaved = await helper.request().post('/ems-partner/devices').send({ config: config() }).expect(200);
      assert.equal(unsaved.body.length, 1);
      const test = await helper
        .request()
        .post('/ems-partner/test')
        .send({ server: 'cfg', config: config() })
        .expect(200);
      assert.equal(test.body.ok, true);
      assert.deepEqual(seen(), [
        'GET /base/inv/devices',
        'GET /base/inv/devices',
        'GET /base/inv/devices',
        'GET /base/inv/devices',
      ]);
      // The default path is no longer asked: unsaved settings without pathDevices reach /base/devices (404 here).
      const dflt = await helper
        .request()
        .post('/ems-partner/devices')
        .send({ config: { ...config(), pathDevices: '' } });
      assert.equal(dflt.status, 502);
      assert.equal(srv.requests.at(-1)?.url, '/base/devices');
    });

    it('pathSites: the admin site picker and the client list sites from it', async () => {
      await loadFlow(flow({ type: 'ems-device-read', mode: 'devices' }, config()));
      const res = await helper.request().post('/ems-partner/sites').send({ server: 'cfg' }).expect(200);
      assert.deepEqual(
        res.body.map((s: any) => s.siteReference),
        [SITE],
      );
      const rt = await helper.getNode('cfg').runtime();
      assert.equal((await rt.client.listSites())[0].pvPeakPower, 100_000);
      assert.deepEqual(rt.paths, {
        devices: '/inv/devices',
        sites: '/inv/sites',
        curtailment: '/ctl/<site>/curtail',
        gridLimits: '/ctl/<site>/limits',
      });
      assert.deepEqual(seen(), ['GET /base/inv/sites', 'GET /base/inv/sites']);
    });

    it('pathCurtailment: the site-steer node (curtailment mode) and client.steerCurtailment post to it, the site filled in', async () => {
      const loaded = await loadFlow(
        flow(
          siteSteer(SITE, {
            mode: 'curtailment',
            curtailmentValue: 50,
            curtailmentValueType: 'num',
            curtailmentUnit: 'kW',
            maxCurtailment: 1_000_000,
          }),
          config(),
        ),
      );
      const reply = await loaded.ask({});
      assert.equal(reply.request.path, `/ctl/${SITE}/curtail`);
      const rt = await helper.getNode('cfg').runtime();
      const body = { setting: { value: 40, unit: 'kW' as const }, validUntil: Date.now() + 600_000 };
      assert.equal((await rt.client.steerCurtailment(SITE, body)).requestId, 'req_1');
      assert.deepEqual(seen(), [`POST /base/ctl/${SITE}/curtail`, `POST /base/ctl/${SITE}/curtail`]);
      assert.deepEqual(JSON.parse(srv.requests[1].body), body);
    });

    it('pathGridLimits: client.steerGridLimits (and steerEndpoint) post to it', async () => {
      await loadFlow(flow({ type: 'ems-device-read', mode: 'devices' }, config()));
      const rt = await helper.getNode('cfg').runtime();
      const body = { upperLimit: { value: -100, unit: 'kW' as const }, validUntil: Date.now() + 600_000 };
      assert.equal((await rt.client.steerGridLimits(SITE, body)).requestId, 'req_1');
      assert.equal(((await rt.client.steerEndpoint('grid-limits', SITE, body)) as any).requestId, 'req_1');
      assert.deepEqual(seen(), [`POST /base/ctl/${SITE}/limits`, `POST /base/ctl/${SITE}/limits`]);
      assert.deepEqual(JSON.parse(srv.requests[0].body), body);
    });

    const BAD: Array<[string, string, string]> = [
      [
        'pathDevices',
        '//evil.example/devices',
        'pathDevices must be a path below the base URL starting with "/", e.g. /devices (empty: that default); got "//evil.example/devices"',
      ],
      [
        'pathSites',
        'https://evil.example/sites',
        'pathSites must be a path below the base URL starting with "/", e.g. /sites (empty: that default); got "https://evil.example/sites"',
      ],
      [
        'pathCurtailment',
        '/sites/x/../steering',
        'pathCurtailment must be a path below the base URL starting with "/" with <site> once, e.g. /sites/<site>/steering/curtailment (empty: that default); got "/sites/x/../steering"',
      ],
      [
        'pathGridLimits',
        '/sites/steering/grid-limits',
        'pathGridLimits must be a path below the base URL starting with "/" with <site> once, e.g. /sites/<site>/steering/grid-limits (empty: that default); got "/sites/steering/grid-limits"',
      ],
    ];
    for (const [property, value, message] of BAD) {
      it(`a bad ${property}: the config node reports it at deploy, a node using it fails with it, nothing is sent`, async () => {
        const loaded = await loadFlow(
          flow({ type: 'ems-device-read', mode: 'devices' }, config({ [property]: value })),
        );
        await assert.rejects(helper.getNode('cfg').runtime(), (e: Error) => e.message === message);
        assert.deepEqual(
          callsOf('error', 'cfg').map((a) => String(a[0]?.message ?? a[0])),
          [message],
        );
        const failure = await loaded.fails({});
        assert.equal(failure.error.message, `ValidationError: ${message}`);
        assert.deepEqual(srv.requests, [], 'nothing sent');
        assert.match(loaded.status.all.at(-1).text, new RegExp(`bad ${property}`));
        const picker = await helper
          .request()
          .post('/ems-partner/devices')
          .send({ config: config({ [property]: value }) });
        assert.deepEqual(picker.body, {
          error: `bad ${property}`,
          message: message.length > 120 ? `${message.slice(0, 119)}…` : message,
        });
        assert.equal(picker.status, 502);
        assert.deepEqual(srv.requests, [], 'nothing sent by the picker either');
      });
    }

    it('the stored key goes with other paths (they stay below the deployed base URL): same origin, new path', async () => {
      const KEY = 'k-PATHS-4242';
      await loadFlow(flow({ type: 'ems-device-read', mode: 'devices' }, config({ authType: 'header' })), {
        cfg: { apiKey: KEY },
      });
      const moved = { ...config({ authType: 'header' }), pathDevices: '/inv/sites', apiKey: '__PWRD__' };
      const res = await helper.request().post('/ems-partner/devices').send({ server: 'cfg', config: moved });
      assert.notEqual(res.status, 403, 'paths are not a change of destination');
      assert.deepEqual(
        srv.requests.map((r) => [r.url, r.headers['x-api-key']]),
        [['/base/inv/sites', KEY]],
      );
      assert.ok(!JSON.stringify(res.body).includes(KEY));
      // A base URL elsewhere is still refused, whatever the paths: the key stays with the deployed base URL.
      const elsewhere = await helper
        .request()
        .post('/ems-partner/devices')
        .send({ server: 'cfg', config: { ...moved, baseUrl: `${srv.url}/other` } });
      assert.equal(elsewhere.status, 403);
      assert.equal(srv.requests.length, 1);
    });
  });

  describe('in Node-RED, on the simulator serving other paths (its `paths` option)', () => {
    const SIM_PATHS = {
      devices: '/api/v2/devices',
      sites: '/api/v2/sites',
      curtailment: '/v2/sites/<site>/pv-limit',
      gridLimits: '/grid/site-<site>/limits',
    };
    const sim = useSimulator({ frozen: false, paths: SIM_PATHS });
    useRuntime();
    const COM = DEFAULT_SITES[0].siteReference;
    const config = () =>
      cfg(sim.s.url, {
        pathDevices: SIM_PATHS.devices,
        pathSites: SIM_PATHS.sites,
        pathCurtailment: SIM_PATHS.curtailment,
        pathGridLimits: SIM_PATHS.gridLimits,
      });
    const paths = (from: number) =>
      sim.s.sim.requestLog.slice(from).map((e) => `${e.method} ${e.path.split('?')[0]} ${e.status}`);

    it('each of the four paths takes effect; the defaults are not asked', async () => {
      const loaded = await loadFlow(
        flow({ type: 'ems-device-read', mode: 'devices' }, config(), {
          id: 'st',
          ...siteSteer(COM, {
            mode: 'curtailment',
            curtailmentValue: 50,
            curtailmentValueType: 'num',
            curtailmentUnit: 'kW',
            maxCurtailment: 1_000_000,
          }),
          server: 'cfg',
          wires: [['out']],
        }),
      );
      const from = sim.s.sim.requestLog.length;
      assert.equal((await loaded.ask()).payload.length, 6);
      const steered = loaded.out.next();
      helper.getNode('st').receive({});
      assert.equal((await steered).request.path, `/v2/sites/${COM}/pv-limit`);
      const sites = await helper.request().post('/ems-partner/sites').send({ server: 'cfg' }).expect(200);
      assert.ok(sites.body.some((x: any) => x.siteReference === COM));
      const rt = await helper.getNode('cfg').runtime();
      await rt.client.steerGridLimits(COM, {
        upperLimit: { value: 100, unit: 'kW' },
        validUntil: Date.now() + 600_000,
      });
      assert.deepEqual(paths(from), [
        'GET /api/v2/devices 200',
        `POST /v2/sites/${COM}/pv-limit 200`,
        'GET /api/v2/sites 200',
        `POST /grid/site-${COM}/limits 200`,
      ]);
    });
  });

  describe('percentCurtailment', () => {
    useRuntime();
    const base = { id: 'cfg', type: 'ems-partner-config', simulator: false, baseUrl: 'http://127.0.0.1:9', retries: 0 };
    const of = async (props: Record<string, unknown>) => {
      await loadFlow(flow({ type: 'ems-device-read', mode: 'devices' }, { ...base, ...props }));
      return (await helper.getNode('cfg').runtime()).percentCurtailment;
    };

    it('a new config node (version 3) converts by default; one saved before version 3 keeps sending %', async () => {
      assert.equal(await of({ version: 3, percentCurtailment: 'convert' }), 'convert');
      assert.equal(await of({ version: 3 }), 'convert');
      assert.equal(await of({ version: 3, percentCurtailment: 'send' }), 'send');
      assert.equal(await of({}), 'send', 'a 0.1.0 config (no version) sent unit "%": it keeps doing so');
      assert.equal(await of({ version: 2, maxBodyMB: 10 }), 'send');
    });

    it('a bad value is reported at deploy with the accepted forms', async () => {
      await loadFlow(
        flow({ type: 'ems-device-read', mode: 'devices' }, { ...base, version: 3, percentCurtailment: 'percent' }),
      );
      const expected =
        'percentCurtailment must be "convert" (to W with the site\'s PV power; default) or "send" (unit "%"); got "percent"';
      await assert.rejects(helper.getNode('cfg').runtime(), (e: Error) => e.message === expected);
      assert.deepEqual(
        callsOf('error', 'cfg').map((a) => String(a[0]?.message ?? a[0])),
        [expected],
      );
    });
  });

  describe('with the built-in simulator', () => {
    useRuntime();
    it('configured paths are checked but the built-in simulator is asked on its own (default) paths', async () => {
      const loaded = await loadFlow(
        flow({ type: 'ems-device-read', mode: 'devices' }, { ...cfg('', { simulator: true }), ...PATHS }),
      );
      const rt = await helper.getNode('cfg').runtime();
      assert.deepEqual(rt.paths, DEFAULT_PATHS);
      assert.ok((await loaded.ask()).payload.length > 0, 'the simulator lists its devices');
    });
  });
});
