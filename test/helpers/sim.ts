/**
 * The simulator and clients a test suite works against: `useSimulator()` starts a simulator on
 * 127.0.0.1, any free port, before the describe block (or before each test) and closes it
 * after; what it returns reads like the started simulator (`url`, `port`, `sim`). `clientFor()`
 * makes an EmsClient on it; `useClients()` makes clients that are closed after each test.
 * No Node-RED here: client and simulator tests load only this (helpers/red.ts re-exports it).
 */
import { EmsClient, type ClientOptions } from '../../src/client';
import { startSimulator, type Simulator, type StartOptions, type StartedSimulator } from '../../src/simulator/index';

/** A simulator started by `useSimulator()`: the one running now. */
export interface SimBox extends StartedSimulator {
  /** The started simulator itself. */
  readonly s: StartedSimulator;
  /** Closes this simulator and starts another (with `opts`, else the same options), e.g. once a fake clock is installed. */
  restart(opts?: StartOptions): Promise<void>;
}

/**
 * A simulator for a describe block (`{ each: true }`: one per test), closed after it. Register it
 * after hooks that must run before it closes (Mocha runs a block's after hooks in order).
 */
export function useSimulator(opts: StartOptions = {}, when: { each?: boolean } = {}): SimBox {
  let current: StartedSimulator | undefined;
  const running = (): StartedSimulator => {
    if (!current) throw new Error('no simulator running: use it inside a test or hook');
    return current;
  };
  const box: SimBox = {
    get s() {
      return running();
    },
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get sim(): Simulator {
      return running().sim;
    },
    close: () => running().close(),
    async restart(again = opts) {
      await current?.close();
      current = await startSimulator({ port: 0, ...again });
    },
  };
  const [start, stop] = when.each ? [beforeEach, afterEach] : [before, after];
  start(async () => {
    current = await startSimulator({ port: 0, ...opts });
  });
  stop(async () => {
    await current?.close(); // (kept: later hooks may still read its log)
  });
  return box;
}

/** Client options; `baseUrl` overrides the target's. */
export type ClientOpts = Partial<ClientOptions>;

/** An EmsClient on a simulator (or any base URL). */
export function clientFor(target: string | { readonly url: string }, opts: ClientOpts = {}): EmsClient {
  return new EmsClient({ baseUrl: typeof target === 'string' ? target : target.url, ...opts });
}

/** Makes clients on a simulator (or base URL) with `defaults` and closes each after the test that made it. */
export function useClients(
  target: string | { readonly url: string },
  defaults: ClientOpts = {},
): (opts?: ClientOpts) => EmsClient {
  const made: EmsClient[] = [];
  afterEach(() => {
    for (const c of made.splice(0)) c.close();
  });
  return (opts = {}) => {
    const client = clientFor(target, { ...defaults, ...opts });
    made.push(client);
    return client;
  };
}

/**
 * A fresh simulator and a client on it for each test: `ready(sim, client)` gets both before the
 * test; after it the client closes, then the simulator.
 */
export function useSimulatorAndClient(
  clientOpts: ClientOpts,
  ready: (sim: StartedSimulator, client: EmsClient) => void,
  simOpts: StartOptions = {},
): void {
  let sim: StartedSimulator | undefined;
  let client: EmsClient | undefined;
  beforeEach(async () => {
    sim = await startSimulator({ port: 0, ...simOpts });
    client = clientFor(sim, clientOpts);
    ready(sim, client);
  });
  afterEach(async () => {
    client?.close();
    await sim?.close();
  });
}

/** What the simulator received for an answer: method, path and (when sent) the body, found by requestId; it answered 200. */
export function received(s: StartedSimulator, requestId: string): { method: string; path: string; body?: unknown } {
  const entry = s.sim.requestLog.find((x) => x.requestId === requestId);
  if (!entry) throw new Error(`the simulator did not log request ${requestId}`);
  if (entry.status !== 200) throw new Error(`request ${requestId} got ${entry.status}, not 200`);
  return entry.body === undefined
    ? { method: entry.method, path: entry.path }
    : { method: entry.method, path: entry.path, body: entry.body };
}
