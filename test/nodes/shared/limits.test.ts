/**
 * One table of limits (src/protocol/limits.ts): a config node, and each node, set
 * to each limit the editor allows deploys and works; a value just outside is refused by the
 * runtime with "<field> <the table's refusal>; got <value>" (the editor shows the same refusal
 * after the field's label: test/browser/editor-limits.test.ts). The table the editor loads
 * (resources/limits.js, made by `npm run build`) is the runtime's.
 */
import assert from 'node:assert/strict';
import { LIMITS, refusal, type Limit } from '../../../src/protocol/limits';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { currentVersion } from '../../../src/nodes/shared/migrations';
import { CONFIG_KEYS, STEER_POWER_KEYS, atLimits, outside, runtimeMessage } from '../../helpers/limits';
import { callsOf, cfg, flow, helper, loadFlow, useRuntime, useSimulator, type Loaded } from '../../helpers/red';
import { read } from '../../helpers/battery-nodes';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const SITE = DEFAULT_SITES[0].siteReference;

const HOUR_MS = 3_600_000;
/**
 * The points a time-series node sent (output "points"): one {x, y} per `resHours` step of its
 * range [start, end), in order, a state of charge (0-100 %) each; the message names the range.
 */
function pointsOf(msg: any, resHours: number): void {
  const start = Date.parse(msg.range.start);
  const end = Date.parse(msg.range.end);
  assert.ok(end > start, JSON.stringify(msg.range));
  const step = resHours * HOUR_MS;
  const count = Math.ceil((end - start) / step);
  assert.equal(msg.payload.length, count, `${count} points of ${resHours} h in ${msg.range.start} to ${msg.range.end}`);
  msg.payload.forEach((p: { x: number; y: number }, i: number) => {
    assert.deepEqual(Object.keys(p), ['x', 'y']);
    assert.equal(p.x, start + i * step, `point ${i} at its step`);
    assert.ok(Number.isFinite(p.y) && p.y >= 0 && p.y <= 100, `point ${i}: soc ${p.y}`);
  });
  assert.equal(msg.property, 'soc');
  assert.equal(msg.unit, '%');
}
const series = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-time-series',
  device: BAT,
  deviceType: 'str',
  property: 'soc',
  propertyType: 'str',
  range: 'last',
  last: 24,
  lastUnit: 'hours',
  resolution: 720,
  output: 'points',
  ...extra,
});
const steer = (extra: Record<string, unknown> = {}) => ({
  type: 'ems-site-steer',
  site: SITE,
  siteType: 'str',
  mode: 'ess',
  essValue: 'payload',
  essValueType: 'msg',
  essUnit: 'kW',
  validity: 'quarter-hour',
  dryRun: true,
  ...extra,
});

/** Errors node `n` reported at deploy (node.error), as messages. */
const deployErrors = () => callsOf('error', 'n').map((a) => String((a[0] as Error)?.message ?? a[0]));

/** The one Catch-able error of a message, and that nothing was output. */
async function refusedWith(f: Loaded, msg: Record<string, unknown>, expected: string): Promise<void> {
  const caught = await f.fails(msg);
  // (Node-RED gives a Catch node the error as text: its name, then its message.)
  assert.equal(caught.error.message, `ValidationError: ${expected}`);
}

describe('one table of limits: the runtime', () => {
  describe('in Node-RED', () => {
    const sim = useSimulator({ frozen: false });
    useRuntime();

    for (const key of CONFIG_KEYS) {
      const limit: Limit = LIMITS[key];
      it(`config node ${key}: ${atLimits(limit).join(' and ')} deploy and read; ${outside(limit).join(', ')} are refused with the table's message`, async () => {
        for (const v of atLimits(limit)) {
          const deployed = await loadFlow(flow(read(), cfg(sim.s.url, { [key]: v })));
          await helper.getNode('cfg').runtime();
          // (A 100 ms timeout deploys; a read is not asked of it, so a busy machine cannot fail this test.)
          if (!(key === 'timeout' && Number(v) < 1000))
            assert.equal(typeof (await deployed.ask()).payload.soc, 'number', `${key} ${v}`);
        }
        for (const v of outside(limit)) {
          const expected = runtimeMessage(key, refusal(limit), v);
          const deployed = await loadFlow(flow(read(), cfg(sim.s.url, { [key]: v })));
          await assert.rejects(helper.getNode('cfg').runtime(), (e: Error) => e.message === expected);
          await refusedWith(deployed, {}, expected);
        }
      });
    }

    it(`maxSplit: ${atLimits(LIMITS.maxSplit).join(' and ')} deploy and split; ${outside(LIMITS.maxSplit).join(', ')} are refused at deploy and per read`, async () => {
      for (const v of atLimits(LIMITS.maxSplit)) {
        const deployed = await loadFlow(flow(read({ split: true, maxSplit: v }), cfg(sim.s.url)));
        assert.deepEqual(deployErrors(), []);
        assert.equal((await deployed.ask()).topic, `${BAT}/soc`);
      }
      for (const v of outside(LIMITS.maxSplit)) {
        const expected = runtimeMessage('maxSplit', refusal(LIMITS.maxSplit), v);
        const deployed = await loadFlow(flow(read({ split: true, maxSplit: v }), cfg(sim.s.url)));
        assert.deepEqual(deployErrors(), [expected]);
        await refusedWith(deployed, {}, expected);
      }
    });

    it(`interval: ${atLimits(LIMITS.interval).join(' and ')} deploy; ${outside(LIMITS.interval).join(', ')} are refused at deploy (the node still reads on input)`, async () => {
      for (const v of atLimits(LIMITS.interval)) {
        const deployed = await loadFlow(flow(read({ interval: v }), cfg(sim.s.url)));
        assert.equal(typeof (await deployed.ask()).payload.soc, 'number');
        assert.deepEqual(deployErrors(), []);
      }
      for (const v of outside(LIMITS.interval)) {
        const deployed = await loadFlow(flow(read({ interval: v }), cfg(sim.s.url)));
        assert.deepEqual(deployErrors(), [runtimeMessage('interval', refusal(LIMITS.interval), v)]);
        assert.equal(typeof (await deployed.ask()).payload.soc, 'number');
      }
    });

    it(`resolution: ${atLimits(LIMITS.resolution).join(' and ')} read; ${outside(LIMITS.resolution).join(', ')} are refused per read (node and msg.resolution)`, async () => {
      for (const v of atLimits(LIMITS.resolution)) {
        const deployed = await loadFlow(flow(series({ resolution: v }), cfg(sim.s.url)));
        pointsOf(await deployed.ask(), Number(v));
      }
      for (const v of outside(LIMITS.resolution)) {
        const deployed = await loadFlow(flow(series({ resolution: v }), cfg(sim.s.url)));
        await refusedWith(deployed, {}, runtimeMessage('resolution', refusal(LIMITS.resolution), v));
        await refusedWith(
          deployed,
          { resolution: Number(v) },
          runtimeMessage('msg.resolution', refusal(LIMITS.resolution), Number(v)),
        );
      }
    });

    for (const [key, unit] of [
      ['lastHours', 'hours'],
      ['lastDays', 'days'],
    ] as const) {
      const limit: Limit = LIMITS[key];
      it(`last in ${unit}: ${atLimits(limit).join(' and ')} read; ${outside(limit).join(', ')} are refused per read`, async () => {
        for (const v of atLimits(limit)) {
          const deployed = await loadFlow(flow(series({ last: v, lastUnit: unit }), cfg(sim.s.url)));
          const reply = await deployed.ask();
          pointsOf(reply, 720);
          const span = Date.parse(reply.range.end) - Date.parse(reply.range.start);
          // The range is `last` back from now, aligned down to a whole hour (so up to 1 h more).
          assert.ok(
            span >= Number(v) * (unit === 'days' ? 24 : 1) * HOUR_MS &&
              span < Number(v) * (unit === 'days' ? 24 : 1) * HOUR_MS + HOUR_MS,
            `last ${v} ${unit}: ${reply.range.start} to ${reply.range.end}`,
          );
        }
        for (const v of outside(limit)) {
          const deployed = await loadFlow(flow(series({ last: v, lastUnit: unit }), cfg(sim.s.url)));
          await refusedWith(deployed, {}, runtimeMessage('last', refusal(limit), v));
        }
      });
    }

    it(`duration: ${atLimits(LIMITS.duration)[0]} deploys, as does the longest the config node allows; ${outside(LIMITS.duration).join(', ')} is refused with validity "duration" only`, async () => {
      const longest = String(LIMITS.maxValidity.max);
      for (const v of [atLimits(LIMITS.duration)[0], longest]) {
        await loadFlow(flow(steer({ validity: 'duration', duration: v }), cfg(sim.s.url, { maxValidity: longest })));
        assert.deepEqual(deployErrors(), []);
      }
      const deployed = await loadFlow(
        flow(steer({ validity: 'duration', duration: longest }), cfg(sim.s.url, { maxValidity: longest })),
      );
      assert.equal((await deployed.ask({ payload: 1 })).request.body.setting.value, 1);
      for (const v of outside(LIMITS.duration)) {
        const expected = runtimeMessage('duration', refusal(LIMITS.duration), v);
        const outsideFlow = await loadFlow(flow(steer({ validity: 'duration', duration: v }), cfg(sim.s.url)));
        assert.deepEqual(deployErrors(), [expected]);
        await refusedWith(outsideFlow, { payload: 1 }, expected);
        // Not used with another validity (the editor does not check it then either).
        await loadFlow(flow(steer({ validity: 'quarter-hour', duration: v }), cfg(sim.s.url)));
        assert.deepEqual(deployErrors(), []);
      }
    });

    for (const key of STEER_POWER_KEYS) {
      const limit: Limit = LIMITS[key];
      it(`site steer ${key}: ${atLimits(limit).join(' and ')} deploy; ${outside(limit).join(', ')} is refused at deploy and per message`, async () => {
        // A node of the current version (a flow saved before it had 0 = no limit: migrated to "none").
        const node = (v: string) => steer({ [key]: v, version: currentVersion('ems-site-steer') });
        for (const v of atLimits(limit)) {
          const deployed = await loadFlow(flow(node(v), cfg(sim.s.url)));
          assert.deepEqual(deployErrors(), []);
          // (0 kW: within an ESS limit of 0.001 W too.)
          assert.equal(
            (await deployed.ask({ payload: key === 'pvPeakPower' ? 1 : 0 })).request.body.setting.value,
            key === 'pvPeakPower' ? 1 : 0,
          );
        }
        for (const v of outside(limit)) {
          const expected = runtimeMessage(key, refusal(limit), v);
          const deployed = await loadFlow(flow(node(v), cfg(sim.s.url)));
          assert.deepEqual(deployErrors(), [expected]);
          await refusedWith(deployed, { payload: 1 }, expected);
        }
      });
    }
  });
});
