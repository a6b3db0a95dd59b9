import assert from 'node:assert/strict';
import { useSimulator } from '../helpers/sim';
import { call, type Reply } from '../helpers/sim-http';

const T0 = Date.UTC(2026, 5, 21, 12, 0, 0); // a summer noon, UTC

const REQ_ID_RE = /^req_[0-9a-f]{16}$/;

function assertError(r: Reply, status: number, messagePart?: RegExp): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(typeof r.body.message, 'string');
  assert.match(r.body.requestId, REQ_ID_RE);
  assert.equal(r.headers.get('x-request-id'), r.body.requestId);
  if (messagePart) assert.match(r.body.message, messagePart);
}

describe('simulator: authentication', () => {
  const KEY = 'test-key-123';
  const simulator = useSimulator({ startTime: T0, frozen: true, apiKey: KEY });

  it('401 without a key and with a wrong key', async () => {
    assertError(await call(simulator.url, 'GET', '/devices'), 401);
    assertError(await call(simulator.url, 'GET', '/devices', undefined, { 'x-api-key': 'wrong' }), 401);
    assertError(await call(simulator.url, 'GET', '/devices', undefined, { authorization: 'Bearer wrong' }), 401);
    assertError(await call(simulator.url, 'GET', '/devices', undefined, { authorization: KEY }), 401);
  });

  it('200 with x-api-key and with Authorization: Bearer', async () => {
    assert.equal((await call(simulator.url, 'GET', '/devices', undefined, { 'x-api-key': KEY })).status, 200);
    assert.equal(
      (await call(simulator.url, 'GET', '/devices', undefined, { authorization: `Bearer ${KEY}` })).status,
      200,
    );
  });

  it('the /sim/* control endpoints need no key', async () => {
    assert.equal((await call(simulator.url, 'GET', '/sim/stats')).status, 200);
    assert.equal((await call(simulator.url, 'POST', '/sim/clock', { advanceMs: 1000 })).status, 200);
  });

  it('a 401 never reveals the key', async () => {
    const response = await call(simulator.url, 'GET', '/devices', undefined, { 'x-api-key': 'wrong' });
    assert.ok(!JSON.stringify(response.body).includes(KEY));
  });
});
