/**
 * The runtime room's edges (src/runtime), part 3: the request budget's queue (aborts before
 * and while waiting, a retry beside waiters, caps lifted, deadlines that pass behind others,
 * closing while busy, a warning listener that throws); the steering queue refusing, dropping
 * and aborting; the bounded fan-out; the shared clock and the poll scheduler at their edges.
 * Time is a fake clock; the client is a fake that records what it was asked to send.
 */
import assert from 'node:assert/strict';
import { EmptyRequestError, ApiError, type EmsClient } from '../../src/client';
import { ValidationError, checkMaxValidity } from '../../src/protocol';
import type { SteeringRequest } from '../../src/protocol/endpoints';
import { SteeringQueue, requestForCommand } from '../../src/runtime/steering-queue';
import { useCrashWatch } from '../helpers/faults';

const T0 = Date.UTC(2026, 5, 1, 12);
const MIN = 60_000;

async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

interface Sent {
  req: SteeringRequest;
  signal?: AbortSignal;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

function fakeSteeringClient(): { client: EmsClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const client = {
    sendSteering: (req: SteeringRequest, o?: { signal?: AbortSignal }) =>
      new Promise((resolve, reject) => sent.push({ req, signal: o?.signal, resolve, reject })),
  } as unknown as EmsClient;
  return { client, sent };
}

describe('runtime coverage: the steering queue refusing, dropping and aborting', () => {
  const crashes = useCrashWatch();
  afterEach(() => assert.deepEqual(crashes.events, []));
  const until = () => Date.now() + 10 * MIN;
  const kW = (value: number) => ({ value, unit: 'kW' as const });

  it('a command without validUntil, or that sets nothing, is refused; nothing is sent', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    await assert.rejects(
      queue.submit({ site: 's', kind: 'ess', energyStorageSetting: kW(1) }),
      (e) => e instanceof ValidationError && e.field === 'validUntil' && /is required/.test(e.message),
    );
    await assert.rejects(
      queue.submit({ site: 's', kind: 'ess', validUntil: until() }),
      (e) => e instanceof EmptyRequestError && e.code === 'EMS_EMPTY',
    );
    assert.throws(
      () => requestForCommand({ site: 's', kind: 'combined', validUntil: until() }),
      (e) => e instanceof EmptyRequestError,
    );
    assert.equal(sent.length, 0);
  });

  it('maxValidity: a validUntil that is not a time, or one given through another field, is refused naming that field', () => {
    const now = T0;
    assert.throws(
      () => checkMaxValidity(Number.NaN, 60 * MIN, now),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'validUntil' &&
        /must be at most 1 h .*; got NaN; nothing was sent/.test(e.message),
    );
    assert.throws(
      () => checkMaxValidity(now + 2 * 60 * MIN, 60 * MIN, now, 'msg.duration', '120 min'),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'msg.duration' &&
        e.message.includes(
          `must give a validUntil at most 1 h (the config node's maxValidity, 60 min) from now; got 120 min (validUntil ${new Date(now + 2 * 60 * MIN).toISOString()})`,
        ),
    );
    assert.throws(
      () => checkMaxValidity(now + 2 * 60 * MIN, 60 * MIN, now, 'msg.payload.validUntil'),
      (e) => e instanceof ValidationError && /must be at most 1 h/.test(e.message),
    );
    assert.throws(
      () => checkMaxValidity(now + 2 * 60 * MIN, 60 * MIN, now, 'msg.until'),
      (e) =>
        e instanceof ValidationError &&
        e.field === 'msg.until' &&
        /; got 2026-06-01T14:00:00\.000Z \(validUntil 2026-06-01T14:00:00\.000Z\)/.test(e.message),
    );
    assert.doesNotThrow(() => checkMaxValidity(now + 2 * 60 * MIN, 0, now), 'no limit');
  });

  it("dropOwner drops only that owner's queued components, describing each; the others still go out; queued() counts per site", async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const ownerA = {};
    const ownerB = {};
    const validUntil = until();
    const busy = queue.submit(
      { site: 's1', kind: 'ess', energyStorageSetting: kW(1), validUntil: validUntil },
      { owner: ownerA },
    ); // in flight
    const dropped = [
      queue
        .submit({ site: 's1', kind: 'combined', maximizeGridImport: true, validUntil: validUntil }, { owner: ownerA })
        .catch((e: ApiError) => e),
      queue.submit({ site: 's1', kind: 'cancel-grid-target' }, { owner: ownerA }).catch((e: ApiError) => e),
      queue
        .submit({ site: 's2', kind: 'ess', energyStorageSetting: kW(2), validUntil: validUntil }, { owner: ownerA })
        .catch((e: ApiError) => e),
    ];
    const kept = queue.submit(
      { site: 's1', kind: 'grid-target', gridTarget: { setpoint: kW(-3) }, validUntil: validUntil },
      { owner: ownerB },
    );
    assert.deepEqual(
      [queue.queued(), queue.queued('s1'), queue.queued('s2')],
      [2, 2, 0],
      "s2 went out at once; s1 waits with two components (b's grid target replaced a's cancel)",
    );
    const desc = queue.dropOwner(ownerA, 'redeployed');
    assert.deepEqual(desc.sort(), ['s1 maximizeGridImport=true']);
    const gone = await dropped[0];
    assert.ok(
      gone instanceof ApiError &&
        gone.code === 'EMS_DROPPED' &&
        gone.message === 'steering not sent (redeployed): maximizeGridImport for s1',
      String(gone),
    );
    // The cancel was merged with b's grid target (later wins): it stays, b's setpoint replaced it.
    assert.deepEqual([queue.queued('s1')], [1]);
    sent[0].resolve({ requestId: 'r1' });
    sent.find((x) => x.req.site === 's2')?.resolve({ requestId: 'r2' });
    await busy;
    await turns();
    const last = sent.at(-1)!;
    assert.equal(last.req.endpoint, 'grid-target');
    last.resolve({ requestId: 'r3' });
    assert.equal((await kept).merged, true);
    assert.ok(!((await dropped[1]) instanceof Error));
  });

  it('dropOwner describes a queued grid target by its setpoint and a cancel as "cancel"', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const owner = {};
    void queue.submit({ site: 's', kind: 'ess', energyStorageSetting: kW(1), validUntil: until() }); // in flight
    const gridTarget = queue
      .submit(
        { site: 's', kind: 'grid-target', gridTarget: { setpoint: kW(-3) }, validUntil: until() },
        { owner: owner },
      )
      .catch(() => 'dropped');
    const inFlight = queue.submit({ site: 't', kind: 'ess', energyStorageSetting: kW(1), validUntil: until() });
    const cancel = queue.submit({ site: 't', kind: 'cancel-grid-target' }, { owner: owner }).catch(() => 'dropped');
    assert.deepEqual(queue.dropOwner(owner).sort(), ['s gridTarget=-3 kW', 't gridTarget=cancel']);
    assert.deepEqual(await Promise.all([gridTarget, cancel]), ['dropped', 'dropped']);
    for (const x of sent) x.resolve({});
    await inFlight;
  });

  it('a command whose components go in two requests resolves once both went out; a failure of either rejects it with that error', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const validUntil = until();
    const both = queue.submit({
      site: 's',
      kind: 'combined',
      energyStorageSetting: kW(1),
      gridTarget: { setpoint: kW(2) },
      validUntil: validUntil,
    });
    let settled = false;
    void both.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await turns();
    assert.deepEqual(sent.map((x) => x.req.endpoint).sort(), ['combined']);
    sent[0].resolve({ requestId: 'a' });
    await turns();
    assert.equal(settled, false, 'one of two requests answered');
    assert.deepEqual(
      sent.map((x) => x.req.endpoint),
      ['combined', 'grid-target'],
    );
    sent[1].reject(new Error('grid target refused'));
    await assert.rejects(both, /grid target refused/);
  });

  it('a queued group whose every caller aborted goes to the client already aborted (the client then sends nothing)', async () => {
    const { client, sent } = fakeSteeringClient();
    const queue = new SteeringQueue(client);
    const first = queue.submit({ site: 's', kind: 'ess', energyStorageSetting: kW(1), validUntil: until() });
    const ctl = new AbortController();
    const later = queue
      .submit({ site: 's', kind: 'ess', energyStorageSetting: kW(2), validUntil: until() }, { signal: ctl.signal })
      .catch((e: Error) => e.message);
    ctl.abort();
    sent[0].resolve({});
    await first;
    await turns();
    assert.equal(sent.length, 2);
    assert.equal(sent[1].signal?.aborted, true);
    sent[1].reject(new Error('aborted before sending'));
    assert.equal(await later, 'aborted before sending');
  });
});
