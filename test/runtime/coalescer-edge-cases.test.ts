/**
 * The runtime room's edges (src/runtime), part 4: the read coalescer with malformed requests,
 * aborts inside the window and on joining, mixed signals, identical reads in one window and
 * merged answers that leave a property out. The client is a fake (every read it was asked for
 * is recorded and settled by the test) or a real one against a loopback stub; the window runs
 * on a fake clock.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import FakeTimers from '@sinonjs/fake-timers';
import { ApiError, EmsClient } from '../../src/client';
import type { MeasurementList, ReadRequest } from '../../src/protocol/types';
import { ReadCoalescer } from '../../src/runtime/coalescer';
import { useCrashWatch } from '../helpers/faults';

/** Waits a few turns of the event loop (in-process promises only). */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

interface Call {
  req: ReadRequest;
  signal?: AbortSignal;
  resolve(a: unknown): void;
  reject(e: unknown): void;
}

/** A client whose reads wait until the test settles them; an abort of a read's signal rejects it with the reason. */
function fakeClient(): { client: EmsClient; calls: Call[] } {
  const calls: Call[] = [];
  const client = {
    read(req: ReadRequest, o?: { signal?: AbortSignal }) {
      return new Promise((resolve, reject) => {
        calls.push({ req, signal: o?.signal, resolve, reject });
        o?.signal?.addEventListener('abort', () => reject(o.signal!.reason), { once: true });
      });
    },
  } as unknown as EmsClient;
  return { client, calls };
}

const list = (ref: string, props: string[]): MeasurementList => ({
  reference: ref,
  measurements: props.map((p, i) => ({ timestamp: 1, property: p, value: i + 1, unit: 'W' })),
});

describe('runtime coverage: the read coalescer with malformed requests, aborts in the window and mixed signals', () => {
  const crashes = useCrashWatch();
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    clock.uninstall();
    assert.deepEqual(crashes.events, []);
  });

  it('a read of an unknown shape (the trusted path throws at once) rejects, and does not hold the device "in flight"', async () => {
    const server = http.createServer((req, res) => {
      const body = JSON.stringify({ timestamp: 1, property: 'soc', value: 50, unit: '%', reference: 'dvc_a' });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new EmsClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retries: 0 });
    try {
      const reads = new ReadCoalescer(client, 50);
      await assert.rejects(reads.read({ device: 'dvc_a', shape: 'bogus' as 'single', properties: ['soc'] }), TypeError);
      // Were the device still counted in flight, this read would wait for the (fake, never ticked) window.
      const reading = await reads.read({ device: 'dvc_a', shape: 'single', properties: ['soc'] });
      assert.equal(reading.value, 50);
      assert.equal(clock.countTimers(), 0, 'no window was opened');
    } finally {
      client.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('a malformed read (properties not a list) rejects at once, never throwing at the call; the read beside it in the window is not affected', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    const good = reads.read({ device: 'd', shape: 'single', properties: ['power'] });
    let bad: Promise<unknown> | undefined;
    assert.doesNotThrow(() => {
      bad = reads.read({ device: 'd', shape: 'list', properties: 'soc' as unknown as string[] });
    });
    await assert.rejects(bad!, TypeError);
    assert.equal(calls.length, 1, 'only the first read was sent so far');
    await clock.tickAsync(5);
    assert.deepEqual(
      calls.map((c) => c.req),
      [
        { device: 'd', shape: 'single', properties: ['soc'] },
        { device: 'd', shape: 'single', properties: ['power'] },
      ],
      'the good read went out alone, as it came',
    );
    calls[1].resolve({ timestamp: 1, property: 'power', value: 7, unit: 'W', reference: 'd' });
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 1, unit: '%', reference: 'd' });
    assert.deepEqual([(await first).value, (await good).value], [1, 7]);
  });

  it('reads aborted within the window are rejected with their reason; the one left goes out alone as it came; all aborted sends nothing', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    const node = new AbortController();
    const other = new AbortController();
    const powerRead = reads
      .read({ device: 'd', shape: 'single', properties: ['power'] }, { signal: node.signal })
      .catch((e: Error) => e);
    const otherRead = reads.read(
      { device: 'd', shape: 'map', properties: ['energy', 'soc'] },
      { signal: other.signal },
    );
    const socRead = reads
      .read({ device: 'd', shape: 'list', properties: ['soc'] }, { signal: node.signal })
      .catch((e: Error) => e);
    node.abort(new Error('node closed'));
    await clock.tickAsync(5);
    assert.equal(((await powerRead) as Error).message, 'node closed');
    assert.equal(((await socRead) as Error).message, 'node closed');
    assert.equal(calls.length, 2);
    assert.deepEqual(
      calls[1].req,
      { device: 'd', shape: 'map', properties: ['energy', 'soc'] },
      'the map read as it came, not merged',
    );
    assert.equal(calls[1].signal, other.signal, 'with its own signal');
    calls[1].resolve({
      reference: 'd',
      measurements: { energy: { value: 1, unit: 'Wh' }, soc: { value: 2, unit: '%' } },
    });
    assert.equal((await otherRead).measurements.soc.value, 2);

    // Every read of the next window aborted: nothing is sent for them.
    const aborter = new AbortController();
    const e1 = reads
      .read({ device: 'd', shape: 'single', properties: ['power'] }, { signal: aborter.signal })
      .catch((e: Error) => e.message);
    const e2 = reads
      .read({ device: 'd', shape: 'single', properties: ['energy'] }, { signal: aborter.signal })
      .catch((e: Error) => e.message);
    aborter.abort(new Error('gone'));
    await clock.tickAsync(5);
    assert.deepEqual(await Promise.all([e1, e2]), ['gone', 'gone']);
    assert.equal(calls.length, 2, 'nothing more sent');
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 1, unit: '%', reference: 'd' });
    await first;
  });

  it('a merged read that one caller cannot abort (it has no signal) is not aborted by the others; it completes for every caller', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    const ctl = new AbortController();
    const powerRead = reads.read({ device: 'd', shape: 'single', properties: ['power'] }, { signal: ctl.signal });
    const energyRead = reads.read({ device: 'd', shape: 'single', properties: ['energy'] });
    await clock.tickAsync(5);
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1].req, { device: 'd', shape: 'list', properties: ['power', 'energy'] });
    assert.equal(calls[1].signal, undefined, 'no signal: some caller cannot abort');
    ctl.abort(new Error('first caller gone'));
    calls[1].resolve(list('d', ['power', 'energy']));
    assert.deepEqual([(await powerRead).value, (await energyRead).value], [1, 2]);
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 1, unit: '%', reference: 'd' });
    await first;
  });

  it('reads of one node share its signal as it is: aborting it aborts the merged request for all of them', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    const node = new AbortController();
    const powerRead = reads
      .read({ device: 'd', shape: 'single', properties: ['power'] }, { signal: node.signal })
      .catch((e: Error) => e.message);
    const energyRead = reads
      .read({ device: 'd', shape: 'map', properties: ['energy'] }, { signal: node.signal })
      .catch((e: Error) => e.message);
    await clock.tickAsync(5);
    assert.equal(calls[1].signal, node.signal, "the node's signal, no new controller");
    node.abort(new Error('redeployed'));
    assert.deepEqual(await Promise.all([powerRead, energyRead]), ['redeployed', 'redeployed']);
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 1, unit: '%', reference: 'd' });
    await first;
  });

  it('close() rejects the reads waiting in a window with EMS_CLOSED and stops its timer; later reads go out directly', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    const waiting = reads.read({ device: 'd', shape: 'single', properties: ['power'] }).catch((e: ApiError) => e);
    reads.close();
    const error = await waiting;
    assert.ok(error instanceof ApiError && error.code === 'EMS_CLOSED', String(error));
    assert.equal(clock.countTimers(), 0);
    const late = reads.read({ device: 'd', shape: 'single', properties: ['energy'] });
    assert.equal(calls.length, 2, 'sent at once, no window');
    calls[1].resolve({ timestamp: 1, property: 'energy', value: 3, unit: 'Wh', reference: 'd' });
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 1, unit: '%', reference: 'd' });
    assert.equal((await late).value, 3);
    await first;
  });
  it('identical reads in one window share one request beside a different one; a merged answer without a property fails only who asked for it', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    const p1 = reads.read({ device: 'd', shape: 'single', properties: ['power'] });
    const p2 = reads.read({ device: 'd', shape: 'single', properties: ['power'] });
    const failure = reads.read({ device: 'd', shape: 'list', properties: ['energy'] }).catch((err: ApiError) => err);
    await clock.tickAsync(5);
    assert.deepEqual(calls[1].req, { device: 'd', shape: 'list', properties: ['power', 'energy'] });
    calls[1].resolve(list('d', ['power'])); // energy left out
    assert.deepEqual([(await p1).value, (await p2).value], [1, 1]);
    const err = await failure;
    assert.ok(
      err instanceof ApiError &&
        err.code === 'EMS_MISSING' &&
        err.message === 'the service returned no value for property "energy" of d',
      String(err),
    );
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 1, unit: '%', reference: 'd' });
    await first;
  });

  it('only identical reads in a window: one request, as the first of them asked it', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'list', properties: ['soc', 'power'] });
    const firstRead = reads.read({ device: 'd', shape: 'map', properties: ['energy'] });
    const secondRead = reads.read({ device: 'd', shape: 'map', properties: ['energy'] });
    await clock.tickAsync(5);
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1].req, { device: 'd', shape: 'map', properties: ['energy'] });
    const answer = { reference: 'd', measurements: { energy: { value: 5, unit: 'Wh' } } };
    calls[1].resolve(answer);
    assert.equal(await firstRead, answer);
    assert.equal(await secondRead, answer);
    calls[0].resolve(list('d', ['soc', 'power']));
    await first;
  });

  it("a merged answer without a measurements array (past the client's check) rejects every waiter with EMS_BAD_RESPONSE", async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    const powerCode = reads
      .read({ device: 'd', shape: 'single', properties: ['power'] })
      .catch((err: ApiError) => err.code);
    const energyCode = reads
      .read({ device: 'd', shape: 'list', properties: ['energy'] })
      .catch((err: ApiError) => err.code);
    await clock.tickAsync(5);
    calls[1].resolve({ reference: 'd', measurements: null });
    assert.deepEqual(await Promise.all([powerCode, energyCode]), ['EMS_BAD_RESPONSE', 'EMS_BAD_RESPONSE']);
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 1, unit: '%', reference: 'd' });
    await first;
  });

  it('a read joining an identical one in flight with a signal that aborted already rejects at once; its own abort ends only its wait', async () => {
    const { client, calls } = fakeClient();
    const reads = new ReadCoalescer(client, 5);
    const first = reads.read({ device: 'd', shape: 'single', properties: ['soc'] });
    await assert.rejects(
      reads.read(
        { device: 'd', shape: 'single', properties: ['soc'] },
        { signal: AbortSignal.abort(new Error('gone already')) },
      ),
      /gone already/,
    );
    const ctl = new AbortController();
    const joined = reads
      .read({ device: 'd', shape: 'single', properties: ['soc'] }, { signal: ctl.signal })
      .catch((e: Error) => e.message);
    ctl.abort(new Error('left'));
    assert.equal(await joined, 'left');
    assert.equal(calls.length, 1, 'no request of its own');
    assert.equal(calls[0].signal, undefined, 'the request in flight was not aborted');
    calls[0].resolve({ timestamp: 1, property: 'soc', value: 9, unit: '%', reference: 'd' });
    assert.equal((await first).value, 9);
    await turns();
  });
});
