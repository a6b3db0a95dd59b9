/**
 * Renewals within maxValidity: a renewed signal never reaches beyond the config node's
 * maxValidity. The renewal runs on a @sinonjs/fake-timers clock (its timers and its `now`
 * injected, as is the steering queue's `now`), so hours pass in no time; its requests go
 * through the real SteeringQueue and EmsClient to the simulator on 127.0.0.1:0.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS } from '../../../src/protocol';
import { EmsClient } from '../../../src/client';
import { SteeringQueue, type SteeringCommand } from '../../../src/runtime';
import { Renewal } from '../../../src/nodes/shared/renewal';
import { settingsOf } from '../../../src/nodes/shared/steer-command';
import { startSimulator, DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';
import { turns } from '../../helpers/red';

const SITE = DEFAULT_SITES[0].siteReference;
const CAP = 60 * MINUTE_MS;

describe('renewal within maxValidity', () => {
  let simulator: StartedSimulator;
  let emsClient: EmsClient;
  let clock: ReturnType<typeof FakeTimers.createClock>;
  let queue: SteeringQueue;
  beforeEach(async () => {
    simulator = await startSimulator();
    emsClient = new EmsClient({ baseUrl: simulator.url, retries: 0 });
    clock = FakeTimers.createClock(Date.now());
    queue = new SteeringQueue(emsClient, { maxValidityMs: CAP, now: () => clock.now });
  });
  afterEach(async () => {
    emsClient.close();
    await simulator.close();
  });

  /** A Renewal on the fake clock sending through the queue; records each send (fake time, validUntil) and its outcome. */
  function renewal(settings: Record<string, unknown>, cap: number | undefined) {
    const sends: Array<{ at: number; validUntil: number; ok?: boolean }> = [];
    const warnings: string[] = [];
    let settled: () => void = () => undefined;
    const renewal = new Renewal({
      send: (cmd) => {
        const rec: { at: number; validUntil: number; ok?: boolean } = { at: clock.now, validUntil: cmd.validUntil! };
        sends.push(rec);
        const pending = queue.submit(cmd);
        pending
          .then(
            () => {
              rec.ok = true;
            },
            () => {
              rec.ok = false;
            },
          )
          .finally(() => settled());
        return pending;
      },
      status: () => undefined,
      warn: (t) => warnings.push(t),
      settings: () => settingsOf({ mode: 'ess', ...settings }),
      maxValidityMs: () => cap,
      now: () => clock.now,
      timers: clock,
    });
    /** Advances the fake clock to the next renewal and waits (in real time, bounded) until its request settled. */
    async function next(): Promise<void> {
      const done = new Promise<void>((resolve) => {
        settled = resolve;
      });
      const sentBefore = sends.length;
      await clock.nextAsync();
      assert.equal(sends.length, sentBefore + 1, 'a renewal fired');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('renewal request did not settle')), 5_000);
      });
      await Promise.race([done, late]).finally(() => clearTimeout(timer));
      await turns();
    }
    return { r: renewal, sends, warnings, next };
  }

  const first = (validUntil: number): SteeringCommand => ({
    site: SITE,
    kind: 'ess',
    energyStorageSetting: { value: -5, unit: 'kW' },
    validUntil,
  });

  it('validity "msg" at the cap: each renewal is clamped to its sending time + maxValidity, and goes out', async () => {
    const { r, sends, warnings, next } = renewal({ validity: 'msg' }, CAP);
    const t0 = clock.now;
    await queue.submit(first(t0 + CAP));
    r.schedule(first(t0 + CAP), t0);
    for (let i = 0; i < 5; i++) await next();
    assert.equal(sends.length, 5);
    for (const e of sends) {
      assert.equal(e.ok, true, 'accepted by the queue and sent');
      assert.ok(e.validUntil - e.at <= CAP, `validUntil ${e.validUntil - e.at} ms after sending`);
      assert.equal(e.validUntil, e.at + CAP, 'clamped (unclamped it would be one validity after the last validUntil)');
    }
    assert.ok(clock.now - t0 > 4 * CAP, 'the chain went on for hours of fake time');
    assert.deepEqual(warnings, []);
    assert.equal(simulator.sim.requestsReceived, 6);
    assert.equal(r.count, 5);
    r.close();
  });

  it('validity "duration" longer than the cap (node 90 min, first signal 60 min): renewals last 60 min', async () => {
    const { r, sends, next } = renewal({ validity: 'duration', duration: 90 }, CAP);
    const t0 = clock.now;
    await queue.submit(first(t0 + CAP));
    r.schedule(first(t0 + CAP), t0);
    for (let i = 0; i < 3; i++) await next();
    for (const e of sends) assert.deepEqual([e.ok, e.validUntil - e.at], [true, CAP]);
    assert.equal(simulator.sim.requestsReceived, 4);
    r.close();
  });

  it('without the clamp the queue refuses the renewal (backstop): nothing is sent and the renewal warns', async () => {
    const { r, sends, warnings, next } = renewal({ validity: 'msg' }, undefined);
    const t0 = clock.now;
    await queue.submit(first(t0 + CAP));
    r.schedule(first(t0 + CAP), t0);
    await next();
    assert.equal(sends[0].ok, false);
    assert.ok(sends[0].validUntil - sends[0].at > CAP);
    assert.equal(simulator.sim.requestsReceived, 1, 'only the first signal');
    assert.match(
      warnings[0],
      /^renewal failed: validUntil must be at most 1 h \(the config node's maxValidity, 60 min\) from now; .*nothing was sent$/,
    );
    r.close();
  });
});
