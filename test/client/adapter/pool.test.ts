/**
 * The undici pool's connector: its own connect timeout (one timer per connection, cleared once
 * the connection is up or has failed), driven with fake timers.
 */
import assert from 'node:assert/strict';
import FakeTimers from '@sinonjs/fake-timers';
import { connector } from '../../../src/client/http-pool';

type Callback = (err: Error | null, socket: unknown) => void;

/** A connector factory whose connections settle only when the test says so. */
function fakeConnector() {
  const pending: Array<{ callback: Callback; socket: { destroyed: boolean; destroy(): void } }> = [];
  const make = (() => (_opts: unknown, callback: Callback) => {
    const socket = {
      destroyed: false,
      destroy() {
        this.destroyed = true;
      },
    };
    pending.push({ callback, socket });
    return socket;
  }) as unknown as Parameters<typeof connector>[0];
  return { make, pending };
}

describe("client transport: the undici pool's connect timeout", () => {
  let clock: ReturnType<typeof FakeTimers.install>;
  beforeEach(() => {
    clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => clock.uninstall());

  it('a connection not up within max(10 s, timeoutMs) fails as ETIMEDOUT and its socket is destroyed', () => {
    const { make, pending } = fakeConnector();
    const connect = connector(make, { concurrency: 2, rejectUnauthorized: true, timeoutMs: 20_000 });
    const seen: Array<Error | null> = [];
    connect({} as never, ((err: Error | null) => seen.push(err)) as never);
    clock.tick(19_999);
    assert.deepEqual(seen, []);
    clock.tick(1);
    assert.equal(seen.length, 1);
    assert.equal((seen[0] as Error & { code?: string }).code, 'ETIMEDOUT');
    assert.equal(pending[0].socket.destroyed, true);
    pending[0].callback(null, pending[0].socket); // a late connect is not reported twice
    assert.equal(seen.length, 1);
    assert.equal(clock.countTimers(), 0);
  });

  it('a connection that is up (or failed) in time clears its timer; the floor is 10 s', () => {
    const { make, pending } = fakeConnector();
    const connect = connector(make, { concurrency: 2, rejectUnauthorized: true, timeoutMs: 300 });
    const seen: Array<Error | null> = [];
    connect({} as never, ((err: Error | null) => seen.push(err)) as never);
    connect({} as never, ((err: Error | null) => seen.push(err)) as never);
    clock.tick(9_999);
    pending[0].callback(null, pending[0].socket);
    pending[1].callback(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), null);
    assert.deepEqual(
      seen.map((e) => e && (e as Error & { code?: string }).code),
      [null, 'ECONNREFUSED'],
    );
    assert.equal(clock.countTimers(), 0);
    assert.equal(pending[0].socket.destroyed, false);
  });
});
