/**
 * A loopback stub (stub-server.ts) started before each test, and clients on it that close after
 * it: `stub` is that test's stub, `client(opts)` makes a client on it (the defaults: no retries, a
 * 5 s deadline). After each test the clients close, then the stub, and no unhandled rejection or
 * uncaught exception may have been seen.
 */
import assert from 'node:assert/strict';
import type { EmsClient } from '../../src/client';
import { useCrashWatch } from './faults';
import { type ClientOpts, useClients } from './sim';
import { startStub, type Stub } from './stub-server';

export function useStubClients(defaults: ClientOpts = { retries: 0, timeoutMs: 5_000 }): {
  readonly stub: Stub;
  client: (opts?: ClientOpts) => EmsClient;
} {
  const crashes = useCrashWatch();
  let current: Stub | undefined;
  const stubNow = (): Stub => {
    if (!current) throw new Error('the stub runs only inside a test');
    return current;
  };
  const client = useClients(
    {
      get url() {
        return stubNow().url;
      },
    },
    defaults,
  );
  beforeEach(async () => {
    current = await startStub();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
    assert.deepEqual(crashes.events, []);
  });
  return {
    get stub() {
      return stubNow();
    },
    client,
  };
}
