/**
 * Steering at fleet scale: the record of steering types in force stays bounded
 * without sweeping all its sites on every request, and a steering request whose waiters share
 * one signal is sent with that signal itself (no controller or combined signal per request),
 * while waiters with different signals abort it only once all of them aborted.
 */
import assert from 'node:assert/strict';
import type { EmsClient } from '../src/client';
import { SteeringQueue } from '../src/runtime';
import { SteeringTypes } from '../src/runtime/steering-types';

describe('steering types in force, many sites', () => {
  it('keeps every site in force when thousands are', () => {
    let now = 1_000_000;
    const types = new SteeringTypes(() => now);
    for (let i = 0; i < 3000; i++) types.accepted(`site_${i}`, 'ess', now + 3_600_000);
    now += 1000;
    assert.equal(types.size, 3000);
    for (let i = 0; i < 3000; i += 499) assert.equal(types.inForce(`site_${i}`, 'asset'), 1_000_000 + 3_600_000);
  });

  it('forgets lapsed sites: the record stays bounded as sites come and go', () => {
    let now = 1_000_000;
    const types = new SteeringTypes(() => now);
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      types.accepted(`site_${i}`, 'ess', now + 1500); // each lapses 1.5 s later
      now += 1000;
      most = Math.max(most, types.size);
    }
    assert.ok(most <= 1001, `at most ${most} sites remembered`);
    assert.equal(types.inForce('site_19999', 'asset'), now + 500);
    assert.equal(types.inForce('site_0', 'asset'), undefined);
  });
});

describe('steering queue: the signal a request is sent with', () => {
  /** A client that holds each request until released and records the signal it got. */
  function fakeClient() {
    const sent: Array<{ signal?: AbortSignal; release: () => void }> = [];
    const client = {
      sendSteering: (_req: unknown, o?: { signal?: AbortSignal }) =>
        new Promise((resolve) => {
          sent.push({ signal: o?.signal, release: () => resolve({}) });
        }),
    } as unknown as EmsClient;
    return { client, sent };
  }
  const until = () => Date.now() + 10 * 60_000;
  const ess = (value: number) => ({
    site: 'site_a',
    kind: 'ess' as const,
    energyStorageSetting: { value, unit: 'kW' as const },
    validUntil: until(),
  });
  const settled = () => new Promise((r) => setImmediate(r));

  it("passes a lone command's signal on as it is", async () => {
    const { client, sent } = fakeClient();
    const queue = new SteeringQueue(client);
    const ctl = new AbortController();
    const pending = queue.submit(ess(1), { signal: ctl.signal });
    await settled();
    assert.equal(sent.length, 1);
    assert.equal(sent[0].signal, ctl.signal);
    sent[0].release();
    await pending;
  });

  it('passes one shared signal on as it is when merged commands carry the same', async () => {
    const { client, sent } = fakeClient();
    const queue = new SteeringQueue(client);
    const ctl = new AbortController();
    const first = queue.submit(ess(1), { signal: ctl.signal });
    await settled();
    const merged = [queue.submit(ess(2), { signal: ctl.signal }), queue.submit(ess(3), { signal: ctl.signal })];
    sent[0].release();
    await first;
    await settled();
    assert.equal(sent.length, 2, 'the first, then one merged request');
    assert.equal(sent[1].signal, ctl.signal);
    sent[1].release();
    await Promise.all(merged);
  });

  it("aborts a merged request only once every waiter's signal aborted, and never when one has none", async () => {
    const { client, sent } = fakeClient();
    const queue = new SteeringQueue(client);
    const abortFirst = new AbortController();
    const abortSecond = new AbortController();
    const first = queue.submit(ess(1));
    await settled();
    const merged = [
      queue.submit(ess(2), { signal: abortFirst.signal }),
      queue.submit(ess(3), { signal: abortSecond.signal }),
    ];
    sent[0].release();
    await first;
    await settled();
    const mergedSignal = sent[1].signal!;
    assert.ok(mergedSignal && mergedSignal !== abortFirst.signal && mergedSignal !== abortSecond.signal);
    abortFirst.abort();
    assert.equal(mergedSignal.aborted, false, 'b still waits');
    abortSecond.abort();
    assert.equal(mergedSignal.aborted, true);
    sent[1].release();
    await Promise.all(merged);

    const abortThird = new AbortController();
    const blocker = queue.submit(ess(4));
    await settled();
    const withSignal = queue.submit(ess(5), { signal: abortThird.signal });
    const without = queue.submit(ess(6));
    sent[2].release();
    await blocker;
    await settled();
    assert.equal(sent.length, 4);
    assert.equal(sent[3].signal, undefined, 'a waiter without a signal: never aborted');
    sent[3].release();
    await Promise.all([withSignal, without]);
  });
});
