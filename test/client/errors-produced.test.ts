/**
 * Every error class, produced by a real failure: the simulator on 127.0.0.1 where
 * it can make the fault, a closed port or a small node:http stub where it cannot. Each test
 * names the path the user takes to the error; among them the OAuth2 token endpoint that cannot
 * be reached, which once overflowed the stack instead of answering an AuthenticationError.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AbortedError,
  ApiError,
  AuthenticationError,
  BadResponseError,
  DroppedError,
  EmptyRequestError,
  HttpError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  RefusedError,
  ServerError,
  TimeoutError,
  ValidationError,
} from '../../src/client';
import { ReadCoalescer, SteeringQueue } from '../../src/runtime';
import { DEFAULT_SITES } from '../../src/simulator';
import { useCrashWatch } from '../helpers/faults';
import { useClients, useSimulator } from '../helpers/sim';

const SITE = DEFAULT_SITES[0].siteReference;
const BATTERY = DEFAULT_SITES[0].battery.deviceReference;
const until = () => Date.now() + 10 * 60_000;

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** A stub service for faults the simulator cannot make: answers every request with `answer`. */
async function stub(
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const srv = http.createServer(answer);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

async function caught(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError || e instanceof ValidationError, `a typed error, got ${String(e)}`);
    return e as ApiError;
  }
  throw new Error('expected a failure');
}

describe('error classes produced by real failures', () => {
  const crashes = useCrashWatch();
  const sim = useSimulator({ apiKey: 'key-123456' });
  const client = useClients(sim, { retries: 0 });
  afterEach(() => {
    sim.sim.setFaults({ rate500: 0, rate429: 0, latencyMs: [0, 0] });
  });
  after(() => {
    assert.deepEqual(crashes.events, []);
  });
  const auth = { type: 'header' as const, apiKey: 'key-123456' };

  it('AuthenticationError (EMS_AUTH): the OAuth2 token endpoint cannot be reached', async () => {
    const port = await closedPort();
    const emsClient = client({
      auth: {
        type: 'oauth2',
        tokenUrl: `http://127.0.0.1:${port}/oauth/token`,
        clientId: 'p',
        clientSecret: 'secret-xyz-987',
      },
    });
    const error = await caught(emsClient.getMeasurement(BATTERY, 'soc'));
    assert.ok(error instanceof AuthenticationError, String(error));
    assert.equal(error.code, 'EMS_AUTH');
    assert.match(error.message, /^OAuth2 token request to .*oauth\/token failed: ECONNREFUSED$/);
    assert.doesNotMatch(error.message, /secret-xyz-987/);
  });

  it('AuthenticationError (HTTP_401): no API key', async () => {
    const error = await caught(client().getMeasurement(BATTERY, 'soc'));
    assert.ok(error instanceof AuthenticationError && error.status === 401, String(error));
  });

  it('NotFoundError (HTTP_404): an unknown device', async () => {
    const error = await caught(client({ auth }).getMeasurement('dvc_nosuchdevice1', 'soc'));
    assert.ok(error instanceof NotFoundError && error.code === 'HTTP_404', String(error));
  });

  it('RateLimitError (HTTP_429) and ServerError (HTTP_500): faults of the simulator', async () => {
    sim.sim.setFaults({ rate429: 1 });
    const error = await caught(client({ auth }).getMeasurement(BATTERY, 'soc'));
    assert.ok(error instanceof RateLimitError && error.status === 429, String(error));
    sim.sim.setFaults({ rate429: 0, rate500: 1 });
    const failure = await caught(client({ auth }).getMeasurement(BATTERY, 'soc'));
    assert.ok(failure instanceof ServerError && failure.status === 500, String(failure));
  });

  it('RefusedError (HTTP_400) and HttpError (another status): a stub service', async () => {
    const svc = await stub((req, res) => {
      const status = req.url!.includes('soc') ? 400 : 302;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'no' }));
    });
    try {
      const error = await caught(client({ baseUrl: svc.url }).getMeasurement(BATTERY, 'soc'));
      assert.ok(error instanceof RefusedError && error.status === 400, String(error));
      const powerError = await caught(client({ baseUrl: svc.url }).getMeasurement(BATTERY, 'power'));
      assert.ok(powerError instanceof HttpError && powerError.constructor === HttpError, String(powerError));
    } finally {
      await svc.close();
    }
  });

  it('NetworkError (ECONNREFUSED): nothing listens', async () => {
    const port = await closedPort();
    const error = await caught(client({ baseUrl: `http://127.0.0.1:${port}` }).getMeasurement(BATTERY, 'soc'));
    assert.ok(error instanceof NetworkError && error.code === 'ECONNREFUSED', String(error));
  });

  it('NetworkError (EMS_ERROR): a failure that is not an HTTP one (an attempt hook that throws)', async () => {
    const emsClient = client({
      auth,
      attempts: {
        before() {
          throw new TypeError('hook broke');
        },
        after() {},
      },
    });
    const error = await caught(emsClient.getMeasurement(BATTERY, 'soc'));
    assert.ok(error instanceof NetworkError && error.code === 'EMS_ERROR', `${error.constructor.name} ${error.code}`);
  });

  it('TimeoutError: the simulator answers later than the deadline', async () => {
    sim.sim.setFaults({ latencyMs: [500, 500] });
    const error = await caught(client({ auth, timeoutMs: 50 }).getMeasurement(BATTERY, 'soc'));
    assert.ok(error instanceof TimeoutError, String(error));
  });

  it('AbortedError (EMS_ABORTED, EMS_CLOSED): the caller aborts; the client is closed', async () => {
    const ac = new AbortController();
    ac.abort();
    const abortedError = await caught(client({ auth }).getMeasurement(BATTERY, 'soc', { signal: ac.signal }));
    assert.ok(abortedError instanceof AbortedError && abortedError.code === 'EMS_ABORTED', String(abortedError));
    const emsClient = client({ auth });
    emsClient.close();
    const laterError = await caught(emsClient.getMeasurement(BATTERY, 'soc'));
    assert.ok(laterError instanceof AbortedError && laterError.code === 'EMS_CLOSED', String(laterError));
  });

  it('BadResponseError (EMS_BAD_RESPONSE, EMS_TOO_LARGE, EMS_MISSING): answers of the wrong shape, too big, or without a property', async () => {
    const svc = await stub((req, res) => {
      if (req.url!.includes('power'))
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ pad: 'x'.repeat(4096) }));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><title>maintenance</title></html>');
    });
    try {
      const emsClient = client({ baseUrl: svc.url, maxBodyBytes: 1024 });
      const bad = await caught(emsClient.getMeasurement(BATTERY, 'soc'));
      assert.ok(bad instanceof BadResponseError && bad.code === 'EMS_BAD_RESPONSE', String(bad));
      const big = await caught(emsClient.getMeasurement(BATTERY, 'power'));
      assert.ok(big instanceof BadResponseError && big.code === 'EMS_TOO_LARGE', String(big));
    } finally {
      await svc.close();
    }
    // The coalescer: a read in flight, two concurrent reads merged into one list request,
    // whose answer lacks the second property.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const lists: string[] = [];
    const svc2 = await stub(async (req, res) => {
      const url = new URL(req.url!, 'http://x');
      const json = (b: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b));
      if (url.pathname.endsWith('/measurement')) {
        await held;
        return void json({ timestamp: Date.now(), property: 'soc', value: 50, unit: '%', reference: BATTERY });
      }
      const props = (url.searchParams.get('properties') ?? '').split(',');
      lists.push(props.join(','));
      json({ reference: BATTERY, measurements: [{ timestamp: Date.now(), property: props[0], value: 1, unit: 'W' }] });
    });
    try {
      const co = new ReadCoalescer(client({ baseUrl: svc2.url }), 5);
      const first = co.measurement(BATTERY, 'soc');
      const merged = Promise.allSettled([co.measurement(BATTERY, 'power'), co.measurement(BATTERY, 'temperature')]);
      const [power, missing] = await merged;
      release();
      assert.equal((await first).value, 50);
      assert.deepEqual(lists, ['power,temperature'], 'one merged list request for the two concurrent reads');
      assert.equal(power.status, 'fulfilled');
      const reason = (missing as PromiseRejectedResult).reason;
      assert.ok(reason instanceof BadResponseError && reason.code === 'EMS_MISSING', String(reason));
      assert.match(reason.message, /no value for property "temperature"/);
    } finally {
      release();
      await svc2.close();
    }
  });

  it('EmptyRequestError (EMS_EMPTY) and DroppedError (EMS_DROPPED): the steering queue', async () => {
    const queue = new SteeringQueue(client({ auth }));
    const empty = await caught(queue.submit({ site: SITE, kind: 'combined', validUntil: until() }));
    assert.ok(empty instanceof EmptyRequestError && empty.code === 'EMS_EMPTY', String(empty));
    sim.sim.setFaults({ latencyMs: [100, 100] });
    const first = queue.submit(
      { site: SITE, kind: 'ess', energyStorageSetting: { value: 1, unit: 'kW' }, validUntil: until() },
      { owner: 'a' },
    );
    const queued = queue.submit(
      { site: SITE, kind: 'ess', energyStorageSetting: { value: 2, unit: 'kW' }, validUntil: until() },
      { owner: 'b' },
    );
    assert.deepEqual(queue.dropOwner('b', 'node closed'), [`${SITE} energyStorageSetting=2 kW`]);
    const [, d] = await Promise.allSettled([first, queued]);
    const dropped = (d as PromiseRejectedResult).reason;
    assert.ok(dropped instanceof DroppedError && dropped.code === 'EMS_DROPPED', String(dropped));
  });

  it('ValidationError (EMS_VALIDATION): a device reference the protocol refuses, nothing sent', async () => {
    const before = sim.sim.requestsReceived;
    const error = await caught(client({ auth }).getMeasurement('../etc', 'soc'));
    assert.ok(error instanceof ValidationError && error.code === 'EMS_VALIDATION', String(error));
    assert.equal(sim.sim.requestsReceived, before);
  });
});
