/**
 * What a Renewal keeps per site. Every new signal stops its site's renewal first, so a node that
 * steers thousands of sites (a fleet, a flow that picks the site per message) with renewal off
 * must not keep an entry per site it ever steered; and where a renewal exists, a stop still ends
 * its chain, also while the renewal's request is in flight. Fake timers (@sinonjs/fake-timers);
 * the sends are answered by hand, so the test decides when a renewal's request settles.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS } from '../../../src/protocol';
import type { SteeringCommand, SteeringResult } from '../../../src/runtime';
import { Renewal, type RenewalEvent } from '../../../src/nodes/shared/renewal';
import { settingsOf } from '../../../src/nodes/shared/steer-command';

const T0 = Date.UTC(2026, 10, 27, 12, 0, 0);

function essCommand(site: string, validUntil: number): SteeringCommand {
  return { site, kind: 'ess', energyStorageSetting: { value: -5, unit: 'kW' }, validUntil };
}

describe('renewal: what it keeps per site', () => {
  let clock: ReturnType<typeof FakeTimers.createClock>;
  beforeEach(() => {
    clock = FakeTimers.createClock(T0);
  });

  /** A Renewal on the fake clock whose sends wait until the test answers them. */
  function renewalOnClock() {
    const sent: Array<{ cmd: SteeringCommand; answer: (result: SteeringResult) => void }> = [];
    const events: RenewalEvent[] = [];
    const renewal = new Renewal({
      send: (cmd) =>
        new Promise<SteeringResult>((resolve) => {
          sent.push({ cmd, answer: resolve });
        }),
      status: (event) => events.push(event),
      warn: () => undefined,
      settings: () => settingsOf({ mode: 'ess', validity: 'duration', duration: 15 }),
      now: () => clock.now,
      timers: clock,
    });
    return { renewal, sent, events };
  }

  it('a stop of a site that has no renewal keeps nothing: 5,000 sites steered with renewal off leave no entry', () => {
    const { renewal } = renewalOnClock();
    for (let index = 0; index < 5000; index++) assert.equal(renewal.stop(`ste_site${index}`), false);
    assert.equal(renewal.sitesKept, 0);
    assert.equal(renewal.pending, 0);
  });

  it('a scheduled renewal is kept and ended by a stop: no timer is left, nothing is sent', async () => {
    const { renewal, sent } = renewalOnClock();
    renewal.schedule(essCommand('ste_a', T0 + 15 * MINUTE_MS), T0);
    assert.equal(renewal.pending, 1);
    assert.equal(renewal.sitesKept, 1);
    assert.equal(renewal.stop('ste_a'), true);
    assert.equal(renewal.pending, 0);
    assert.equal(clock.countTimers(), 0);
    await clock.tickAsync(30 * MINUTE_MS);
    assert.equal(sent.length, 0);
  });

  it('a stop while the renewal request is in flight ends the chain: no status "renewed", no new timer', async () => {
    const { renewal, sent, events } = renewalOnClock();
    renewal.schedule(essCommand('ste_a', T0 + 15 * MINUTE_MS), T0);
    await clock.nextAsync();
    assert.equal(sent.length, 1, 'the renewal went out');
    assert.equal(renewal.pending, 0, 'no timer while its request is in flight');
    assert.equal(renewal.stop('ste_a'), false);
    sent[0].answer({
      request: { method: 'POST', path: '/sites/ste_a/steering/ess', body: {} },
      response: {},
      merged: false,
    });
    await clock.tickAsync(0);
    assert.deepEqual(events, []);
    assert.equal(renewal.pending, 0);
    assert.equal(clock.countTimers(), 0);
  });

  it('without a stop the chain goes on: the answered renewal is scheduled again, before its validUntil', async () => {
    const { renewal, sent, events } = renewalOnClock();
    renewal.schedule(essCommand('ste_a', T0 + 15 * MINUTE_MS), T0);
    await clock.nextAsync();
    sent[0].answer({
      request: { method: 'POST', path: '/sites/ste_a/steering/ess', body: {} },
      response: {},
      merged: false,
    });
    await clock.tickAsync(0);
    assert.deepEqual(events, ['renewed']);
    assert.equal(renewal.pending, 1);
    assert.ok(sent[0].cmd.validUntil! > T0 + 15 * MINUTE_MS, 'the renewal reaches further');
    assert.ok(clock.now < T0 + 15 * MINUTE_MS, 'it went out before the signal expired');
  });
});
