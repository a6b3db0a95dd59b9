import assert from 'node:assert/strict';
import { HOUR_MS } from '../../src/protocol/time';
import { DEFAULT_SITES } from '../../src/simulator/index';
import { useSimulator } from '../helpers/sim';
import { LOG_CAPACITY } from '../../src/simulator/request-log';
import { call } from '../helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 8, 0, 0);
const COM = DEFAULT_SITES[0];
const SOC = `/devices/${COM.battery.deviceReference}/measurement?property=soc`;

describe('simulator: request log and stats', () => {
  const simulator = useSimulator({ startTime: T0, frozen: true }, { each: true });

  it('logs method, path, body, time and status of API requests, not of /sim/*', async () => {
    await call(simulator.url, 'GET', SOC);
    const body = { setting: { value: 5, unit: 'kW' }, validUntil: T0 + HOUR_MS };
    await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering/ess`, body);
    await call(simulator.url, 'GET', '/nope');
    await call(simulator.url, 'GET', '/sim/stats');
    const log = simulator.sim.requestLog;
    assert.equal(log.length, 3);
    assert.deepEqual(
      log.map((e) => [e.method, e.path, e.status, e.time]),
      [
        ['GET', SOC, 200, T0],
        ['POST', `/sites/${COM.siteReference}/steering/ess`, 200, T0],
        ['GET', '/nope', 404, T0],
      ],
    );
    assert.deepEqual(log[1].body, body);
    const stats = (await call(simulator.url, 'GET', '/sim/stats')).body;
    assert.equal(stats.requests, 3);
    assert.equal(stats.byRoute['GET /devices/:ref/measurement'], 1);
    assert.equal(stats.byRoute['POST /sites/:ref/steering/ess'], 1);
    assert.equal(stats.byRoute.unmatched, 1);
    assert.deepEqual(stats.byStatus, { '200': 2, '404': 1 });
    assert.equal((await call(simulator.url, 'GET', '/sim/log?limit=1')).body.entries.length, 1);
    simulator.sim.clearLog();
    assert.equal(simulator.sim.requestLog.length, 0);
    assert.equal(simulator.sim.stats().requests, 0);
  });

  it('keeps only the last 10,000 entries', () => {
    for (let i = 0; i < LOG_CAPACITY + 25; i++)
      simulator.sim.log.add({
        method: 'GET',
        path: `/p/${i}`,
        route: 'unmatched',
        time: i,
        status: 404,
        requestId: 'req_x',
      });
    const log = simulator.sim.requestLog;
    assert.equal(log.length, LOG_CAPACITY);
    assert.equal(log[0].path, '/p/25');
    assert.equal(log[LOG_CAPACITY - 1].path, `/p/${LOG_CAPACITY + 24}`);
    assert.equal(simulator.sim.stats().requests, LOG_CAPACITY + 25);
  });

  it('reset() clears steering and the log', async () => {
    await call(simulator.url, 'POST', `/sites/${COM.siteReference}/steering`, {
      maximizeGridImport: true,
      validUntil: T0 + HOUR_MS,
    });
    simulator.sim.reset();
    assert.equal(simulator.sim.steeringState(COM.siteReference).components.maximizeGridImport, null);
    assert.equal(simulator.sim.requestLog.length, 0);
  });
});
