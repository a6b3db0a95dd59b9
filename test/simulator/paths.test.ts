/**
 * Configurable paths in the simulator: with `paths` (or the CLI's --path-* flags) it
 * serves the list of devices, the list of sites, curtailment and grid limits on the configured
 * paths, and the default paths then answer 404, so a test can prove a client uses the
 * configured path. A client configured with the same paths reaches each one.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { HOUR_MS } from '../../src/protocol/time';
import { DEFAULT_PATHS, type ApiPaths } from '../../src/protocol/paths';
import { DEFAULT_SITES, Simulator, startSimulator } from '../../src/simulator/index';
import { clientFor, useSimulator } from '../helpers/sim';
import { parseCli } from '../../src/simulator/cli';
import { matchRoute } from '../../src/simulator/routes';
import { call } from '../helpers/sim-http';

const COM = DEFAULT_SITES[0].siteReference;
const kW = (value: number) => ({ value, unit: 'kW' });

const CONFIGURED: ApiPaths = {
  devices: '/api/v2/devices',
  sites: '/api/v2/sites',
  curtailment: '/sites/<site>/steering/pv-limit',
  gridLimits: '/grid/site-<site>/limits',
};

describe('simulator: configurable paths', () => {
  describe('each configured path takes effect; its default then answers 404', () => {
    const simulator = useSimulator({ frozen: true, paths: CONFIGURED }); // now: the client checks validUntil against its clock
    const until = () => simulator.sim.clock.now() + HOUR_MS;

    it('devices', async () => {
      const response = await call(simulator.url, 'GET', CONFIGURED.devices);
      assert.equal(response.status, 200);
      assert.equal(response.body.devices.length, 6);
      assert.equal((await call(simulator.url, 'GET', '/devices')).status, 404);
      const measurement = await call(
        simulator.url,
        'GET',
        `/devices/${DEFAULT_SITES[0].battery.deviceReference}/measurement?property=soc`,
      );
      assert.equal(measurement.status, 200, "the measurement paths are the specification's and stay");
    });

    it('sites', async () => {
      const response = await call(simulator.url, 'GET', CONFIGURED.sites);
      assert.equal(response.status, 200);
      assert.equal(response.body.sites[0].siteReference, COM);
      assert.equal((await call(simulator.url, 'GET', '/sites')).status, 404);
      assert.equal((await call(simulator.url, 'GET', `/sites/${COM}/state`)).status, 200, 'the site reads stay');
    });

    it('curtailment', async () => {
      const response = await call(simulator.url, 'POST', `/sites/${COM}/steering/pv-limit`, {
        setting: kW(100),
        validUntil: until(),
      });
      assert.equal(response.status, 200);
      assert.equal(simulator.sim.steeringState(COM).components.productionCurtailment?.value, 100);
      const old = await call(simulator.url, 'POST', `/sites/${COM}/steering/curtailment`, {
        setting: kW(200),
        validUntil: until(),
      });
      assert.equal(old.status, 404);
      assert.equal(simulator.sim.steeringState(COM).components.productionCurtailment?.value, 100, 'nothing applied');
      assert.equal(simulator.sim.requestLog.at(-2)?.route, 'POST /sites/:ref/steering/pv-limit');
    });

    it('grid limits (the site within a segment)', async () => {
      const response = await call(simulator.url, 'POST', `/grid/site-${COM}/limits`, {
        upperLimit: kW(300),
        validUntil: until(),
      });
      assert.equal(response.status, 200);
      assert.equal(simulator.sim.steeringState(COM).components.gridLimits?.upperW, 300_000);
      assert.equal(
        (
          await call(simulator.url, 'POST', `/sites/${COM}/steering/grid-limits`, {
            upperLimit: kW(1),
            validUntil: until(),
          })
        ).status,
        404,
      );
      assert.equal(
        (await call(simulator.url, 'POST', '/grid/site-/limits', { upperLimit: kW(1), validUntil: until() })).status,
        404,
        'an empty site does not match',
      );
      assert.equal(
        (
          await call(simulator.url, 'POST', '/grid/site-ste_unknown00000/limits', {
            upperLimit: kW(1),
            validUntil: until(),
          })
        ).status,
        404,
      );
      assert.equal(simulator.sim.steeringState(COM).components.gridLimits?.upperW, 300_000);
    });

    it('the paths the specification shows stay where they are', async () => {
      for (const p of ['/steering', '/steering/ess', '/steering/grid-target']) {
        const body =
          p === '/steering/grid-target'
            ? { setpoint: kW(0), validUntil: until() }
            : p === '/steering'
              ? { maximizeGridImport: false, validUntil: until() }
              : { setting: kW(1), validUntil: until() };
        assert.equal((await call(simulator.url, 'POST', `/sites/${COM}${p}`, body)).status, 200, p);
      }
      assert.equal((await call(simulator.url, 'DELETE', `/sites/${COM}/steering/grid-target`)).status, 200);
    });

    it('a client with the same paths reaches every configured path; one with the defaults gets 404', async () => {
      const configured = clientFor(simulator, { retries: 0, paths: CONFIGURED });
      const defaults = clientFor(simulator, { retries: 0 });
      try {
        assert.equal((await configured.listDevices()).length, 6);
        assert.equal((await configured.listSites()).length, 2);
        await configured.steerEndpoint('curtailment', COM, { setting: kW(50), validUntil: until() });
        await configured.steerEndpoint('grid-limits', COM, { lowerLimit: kW(-20), validUntil: until() });
        const log = simulator.sim.requestLog.slice(-4).map((e) => `${e.method} ${e.path} ${e.status}`);
        assert.deepEqual(log, [
          'GET /api/v2/devices 200',
          'GET /api/v2/sites 200',
          `POST /sites/${COM}/steering/pv-limit 200`,
          `POST /grid/site-${COM}/limits 200`,
        ]);
        await assert.rejects(defaults.listDevices(), (e: { status?: number }) => e.status === 404);
        await assert.rejects(
          defaults.steerEndpoint('grid-limits', COM, { lowerLimit: kW(-20), validUntil: until() }),
          (e: { status?: number }) => e.status === 404,
        );
      } finally {
        configured.close();
        defaults.close();
      }
    });
  });

  it('without paths the defaults are served (and routes match them)', async () => {
    const sim = new Simulator();
    assert.deepEqual(sim.paths, DEFAULT_PATHS);
    assert.ok(sim.routes.match(['sites', COM, 'steering', 'grid-limits']));
    assert.ok(matchRoute(['devices']));
  });

  it('a bad or clashing path is refused when the simulator is made', () => {
    assert.throws(
      () => new Simulator({ paths: { gridLimits: '/limits' } }),
      /paths\.gridLimits: pathGridLimits must be a path below the base URL .* with <site> once/,
    );
    assert.throws(() => new Simulator({ paths: { devices: 'https://evil.example/devices' } }), /paths\.devices/);
    assert.throws(() => new Simulator({ paths: { curtailment: '/sites/<site>/../x' } }), /paths\.curtailment/);
    assert.throws(() => new Simulator({ paths: { bogus: '/x' } as never }), /paths\.bogus is not a configurable path/);
    assert.throws(
      () => new Simulator({ paths: { curtailment: '/sites/<site>/steering' } }),
      /POST \/sites\/<site>\/steering is already served/,
    );
    assert.throws(() => new Simulator({ paths: { sites: '/devices' } }), /GET \/devices is already served/);
    assert.throws(() => new Simulator({ paths: { gridLimits: '/x/:ref/<site>' } }), /must not contain ":ref"/);
  });

  describe('CLI flags', () => {
    it('--path-devices, --path-sites, --path-curtailment, --path-grid-limits set the paths', async () => {
      const parsed = parseCli([
        '--port',
        '0',
        '--path-devices',
        CONFIGURED.devices,
        '--path-sites',
        CONFIGURED.sites,
        '--path-curtailment',
        CONFIGURED.curtailment,
        '--path-grid-limits',
        CONFIGURED.gridLimits,
      ]);
      assert.equal(parsed.help, false);
      if (parsed.help) return;
      assert.deepEqual(parsed.opts.paths, CONFIGURED);
      const started = await startSimulator({ ...parsed.opts, host: '127.0.0.1' });
      try {
        assert.equal((await call(started.url, 'GET', CONFIGURED.devices)).status, 200);
        assert.equal((await call(started.url, 'GET', '/devices')).status, 404);
      } finally {
        await started.close();
      }
      const none = parseCli(['--port', '0']);
      assert.equal(none.help === false && none.opts.paths, undefined, 'no flag: the defaults');
    });

    it('refuses a bad path with a message naming the flag', () => {
      assert.throws(
        () => parseCli(['--path-grid-limits', '/limits']),
        /--path-grid-limits must be a path below the base URL/,
      );
      assert.throws(() => parseCli(['--path-devices', '']), /--path-devices must not be empty/);
      assert.throws(() => parseCli(['--path-curtailment', '/sites/<site>/steering/ess']), /already served/);
    });

    it('the CLI process exits 2 on a bad path', async function () {
      this.timeout(15_000);
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.join('src', 'simulator', 'cli.ts'), '--path-sites', '//evil'],
        {
          cwd: path.resolve(__dirname, '..', '..'),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 2);
      assert.match(stderr, /--path-sites must be a path below the base URL/);
    });
  });
});
