/**
 * The client room's edges (src/client), part 1: the limiter under aborts, caps and long
 * queues; the transport's shared 429 pause, the attempt hook refusing or delaying, bodies over
 * the limit both ways, a reset steering request. A loopback stub (test/helpers/stub-server.ts)
 * answers each test as it needs; time is a fake clock.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import {
  AbortedError,
  BadResponseError,
  BudgetError,
  NetworkError,
  RateLimitError,
  ServerError,
  type Attempt,
  type AttemptHook,
  type ConnectionState,
} from '../../src/client';
import { withDeadline } from '../../src/client/transport';
import { secretsOf } from '../../src/client/auth';
import { Budget, budgetCaps } from '../../src/runtime';
import { useStubClients } from '../helpers/stub-clients';
import { DEV, MEASUREMENT, SITE, json, outcome, turns } from '../helpers/stub-server';

describe('client coverage: the transport against a stub', function () {
  this.timeout(20_000);
  let clock: ReturnType<typeof FakeTimers.install> | undefined;
  afterEach(() => {
    clock?.uninstall();
    clock = undefined;
  });
  const env = useStubClients();
  const client = env.client;

  it('a 429 without Retry-After pauses every request of the client for 1 s; one aborted while it waits is never sent', async () => {
    clock = FakeTimers.install({ now: Date.UTC(2026, 10, 24, 12), toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    let first = true;
    env.stub.handle = (h, res) => {
      if (first) {
        first = false;
        json(res, 429, { message: 'slow down' }); // no Retry-After
      } else json(res, 200, MEASUREMENT(new URL(h.url, env.stub.url).searchParams.get('property') ?? 'soc'));
    };
    const states: ConnectionState[] = [];
    const emsClient = client();
    emsClient.onState((s) => states.push(s));
    await assert.rejects(
      emsClient.getMeasurement(DEV, 'soc'),
      (e) => e instanceof RateLimitError && e.status === 429 && e.retryAfter === undefined,
    );
    const t0 = Date.now();
    assert.equal(emsClient.transport.rateLimitedUntil, t0 + 1000, 'a pause of 1 s when the service names none');
    assert.deepEqual(states, [{ state: 'rate-limited', until: t0 + 1000 }]);

    const ctl = new AbortController();
    const aborted = outcome(emsClient.getMeasurement(DEV, 'power', { signal: ctl.signal }));
    const later = emsClient.getMeasurement(DEV, 'energy');
    await turns();
    ctl.abort(); // a plain abort: its reason is an AbortError
    const abortError = await aborted;
    assert.ok(!abortError.ok && abortError.error instanceof AbortedError, String(!abortError.ok && abortError.error));
    assert.equal((abortError.error as AbortedError).code, 'EMS_ABORTED');
    assert.equal((abortError.error as AbortedError).message, `GET /devices/${DEV}/measurement aborted`);
    assert.equal(env.stub.hits.length, 1, 'nothing sent while paused');

    await clock.tickAsync(1000);
    assert.equal((await later).property, 'energy');
    assert.equal(emsClient.transport.rateLimitedUntil, 0, 'the pause is over');
    assert.deepEqual(
      env.stub.hits.map((h) => h.url),
      [`/devices/${DEV}/measurement?property=soc`, `/devices/${DEV}/measurement?property=energy`],
      'the aborted read was never sent',
    );
    assert.deepEqual(states.at(-1), { state: 'ok' });
  });

  it('a 429 with "Retry-After: 0" sets no pause', async () => {
    env.stub.handle = (_h, res) => json(res, 429, { message: 'again' }, { 'retry-after': '0' });
    const emsClient = client();
    await assert.rejects(
      emsClient.getMeasurement(DEV, 'soc'),
      (e) => e instanceof RateLimitError && e.retryAfter === 0,
    );
    assert.equal(emsClient.transport.rateLimitedUntil, 0);
  });

  it('a listener that throws does not break the request nor keep other listeners from being told; an unsubscribed one is not told', async () => {
    env.stub.handle = (_h, res) => json(res, 503, '');
    const emsClient = client();
    const told: string[] = [];
    emsClient.onState(() => {
      throw new Error('listener bug');
    });
    const off = emsClient.onState((s) => told.push(`off ${s.state}`));
    emsClient.onState((s) => told.push(s.state === 'error' ? `error ${s.reason}` : s.state));
    off();
    await assert.rejects(
      emsClient.getMeasurement(DEV, 'soc'),
      (e) => e instanceof ServerError && e.message === `GET /devices/${DEV}/measurement failed: HTTP 503`,
    );
    assert.deepEqual(told, ['error HTTP 503']);
    assert.equal(emsClient.state.state, 'error');
  });

  it('an answer over maxBodyBytes is EMS_TOO_LARGE, says "answer too large" in the state and is not retried (read or steering)', async () => {
    env.stub.handle = (_h, res) => json(res, 200, { ...MEASUREMENT(), pad: 'x'.repeat(4096) });
    const emsClient = client({ maxBodyBytes: 1024, retries: 3, retryBaseMs: 1, retryMaxMs: 1 });
    const states: ConnectionState[] = [];
    emsClient.onState((s) => states.push(s));
    await assert.rejects(
      emsClient.getMeasurement(DEV, 'soc'),
      (e) =>
        e instanceof BadResponseError &&
        e.code === 'EMS_TOO_LARGE' &&
        /answer is over the limit of 0 MB \(maxBodyMB\)$/.test(e.message),
    );
    assert.deepEqual(states, [{ state: 'error', reason: 'answer too large' }]);
    await assert.rejects(
      emsClient.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      (e) => e instanceof BadResponseError && e.code === 'EMS_TOO_LARGE',
    );
    assert.equal(env.stub.hits.length, 2, 'one attempt each: a body over the limit is not retried');
  });

  it('a request body over maxBodyBytes is refused before sending: EMS_TOO_LARGE naming the request body', async () => {
    const emsClient = client({ maxBodyBytes: 40, retries: 3 });
    const states: ConnectionState[] = [];
    emsClient.onState((s) => states.push(s));
    await assert.rejects(
      emsClient.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      (e) => {
        assert.ok(e instanceof BadResponseError, String(e));
        assert.equal(e.code, 'EMS_TOO_LARGE');
        assert.equal(e.message, `POST /sites/${SITE}/steering/ess request body is over the limit of 0 MB (maxBodyMB)`);
        return true;
      },
    );
    assert.equal(env.stub.hits.length, 0, 'nothing sent');
    assert.equal(states[0]?.state, 'error');
  });

  it('a steering request whose connection is reset is retried (transient), and the retry is what counts', async () => {
    let count = 0;
    env.stub.handle = (h, res) => {
      if (count++ === 0) res.socket?.destroy();
      else json(res, 200, { ...JSON.parse(h.body), requestId: 'req_2' });
    };
    const emsClient = client({ retries: 2, retryBaseMs: 1, retryMaxMs: 2 });
    const result = await emsClient.steerEss(SITE, {
      setting: { value: 2, unit: 'kW' },
      validUntil: Date.now() + 600_000,
    });
    assert.equal(result.requestId, 'req_2');
    assert.equal(env.stub.hits.length, 2);
    assert.equal(env.stub.hits[0].body, env.stub.hits[1].body, 'the same body sent again');
  });

  it('an attempt hook that rejects with a non-Error refuses the request: EMS_ERROR, nothing sent, no "after"', async () => {
    const seen: string[] = [];
    const hook: AttemptHook = {
      before: () => Promise.reject('budget says no'),
      after: (_a, o) => seen.push(o),
    };
    const emsClient = client({ attempts: hook });
    await assert.rejects(
      emsClient.getMeasurement(DEV, 'soc'),
      (e) =>
        e instanceof NetworkError && e.code === 'EMS_ERROR' && e.message === `GET /devices/${DEV}/measurement failed`,
    );
    assert.deepEqual(seen, []);
    assert.equal(env.stub.hits.length, 0);
    assert.equal(emsClient.transport.limiter.inFlight, 0, 'the slot was freed');
  });

  it('a caller that aborts while the attempt hook makes it wait is not sent when the hook lets it go; the hook is told "failure"', async () => {
    let release!: () => void;
    const seen: Array<[Attempt, string]> = [];
    const hook: AttemptHook = {
      before: (a) =>
        a.url.includes('property=soc')
          ? new Promise<void>((r) => {
              release = r;
            })
          : undefined,
      after: (a, o) => seen.push([a, o]),
    };
    const emsClient = client({ attempts: hook });
    const ctl = new AbortController();
    const pending = outcome(emsClient.getMeasurement(DEV, 'soc', { signal: ctl.signal }));
    await turns();
    ctl.abort(new Error('node closed'));
    release(); // the hook ignores the abort and lets the attempt go
    const result = await pending;
    assert.ok(
      !result.ok && result.error instanceof AbortedError && result.error.code === 'EMS_ABORTED',
      String(!result.ok && result.error),
    );
    await emsClient.getMeasurement(DEV, 'power');
    assert.deepEqual(
      env.stub.hits.map((h) => h.url),
      [`/devices/${DEV}/measurement?property=power`],
      'only the later read reached the service',
    );
    assert.deepEqual(
      seen.map(([a, o]) => `${a.method} ${a.url} ${a.kind} ${a.retry} ${o}`),
      [
        `GET /devices/${DEV}/measurement?property=soc read false failure`,
        `GET /devices/${DEV}/measurement?property=power read false ok`,
      ],
    );
    assert.equal(emsClient.transport.limiter.inFlight, 0);
  });

  it('a budget refusal of a long path names it without its query, cut to 200 characters', async () => {
    env.stub.handle = (_h, res) => json(res, 200, { ok: true });
    const budget = new Budget();
    budget.configure(budgetCaps({ maxPerMinute: 1 }));
    const emsClient = client({ attempts: budget });
    const path = `/${'a'.repeat(300)}?token=s3cret`;
    assert.equal((await emsClient.raw('GET', path)).statusCode, 200);
    await assert.rejects(emsClient.raw('GET', path), (e) => {
      assert.ok(e instanceof BudgetError, String(e));
      assert.equal(e.request.path, `/${'a'.repeat(198)}…`);
      assert.doesNotMatch(e.message, /s3cret/);
      return true;
    });
    assert.equal(env.stub.hits.length, 1);
  });

  it('a timeout of 0 sets no deadline: the request still completes', async () => {
    const emsClient = client({ timeoutMs: 0 });
    assert.equal((await emsClient.getMeasurement(DEV, 'soc')).value, 42);
  });
});

describe('client coverage: the wall-clock deadline of one attempt', () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => clock.uninstall());

  /** An adapter that never answers; it fails as cancelled when its signal aborts (as axios' does). */
  const hanging = (seen: Array<unknown>) =>
    ((config: { signal?: { addEventListener(t: string, f: () => void): void } }) =>
      new Promise((_r, reject) => {
        seen.push(config.signal);
        config.signal?.addEventListener('abort', () =>
          reject(Object.assign(new Error('canceled'), { __CANCEL__: true, code: 'ERR_CANCELED' })),
        );
      })) as never;

  it('a request without a signal still gets the deadline, and its config is left without one', async () => {
    const seen: unknown[] = [];
    const config = { url: '/x', headers: {} } as never;
    const pending = withDeadline(hanging(seen), config, 50).then(
      () => assert.fail('no answer expected'),
      (e: { code?: string; message: string }) => e,
    );
    await clock.tickAsync(50);
    const settledError = await pending;
    assert.equal(settledError.code, 'ETIMEDOUT');
    assert.equal(settledError.message, 'timeout of 50ms exceeded (wall-clock)');
    assert.equal(seen.length, 1);
    assert.ok(seen[0], "the adapter got the attempt's signal");
    assert.equal(Object.prototype.hasOwnProperty.call(config, 'signal'), false);
    assert.equal(clock.countTimers(), 0);
  });

  it('a caller that aborts first fails it as cancelled, not as a timeout; a signal aborted before the start sends nothing', async () => {
    const seen: unknown[] = [];
    const ctl = new AbortController();
    const config = { url: '/x', headers: {}, signal: ctl.signal } as never;
    const pendingCode = withDeadline(hanging(seen), config, 50).catch((e: { code?: string }) => e.code);
    ctl.abort();
    assert.equal(await pendingCode, 'ERR_CANCELED');
    assert.equal((config as { signal: unknown }).signal, ctl.signal, "the caller's signal put back");
    await assert.rejects(
      withDeadline(hanging(seen), { url: '/y', headers: {}, signal: AbortSignal.abort() } as never, 50),
      (e: { code?: string }) => e.code === 'ERR_CANCELED',
    );
    assert.equal(seen.length, 1, 'the adapter was never called for the aborted one');
    assert.deepEqual(secretsOf(undefined), []);
  });
});
