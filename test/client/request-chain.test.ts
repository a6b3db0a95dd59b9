/**
 * The request chain under axios: with no authentication or a key or token set at once, a request
 * reaches the transport in the call that makes it (axios runs its request interceptors inline only
 * when every one is synchronous); axios-retry still counts the attempts of a retried read.
 */
import assert from 'node:assert/strict';
import type { Attempt, AttemptHook } from '../../src/client';
import { useStubClients } from '../helpers/stub-clients';
import { DEV, MEASUREMENT, json } from '../helpers/stub-server';

describe('client: the request chain under axios', function () {
  this.timeout(20_000);
  const env = useStubClients();
  const client = env.client;

  /** A hook that only records what it is shown. */
  const recorder = (admitted: Attempt[], ended: string[]): AttemptHook => ({
    admit: (attempt) => admitted.push(attempt),
    before: () => undefined,
    after: (attempt, how) => ended.push(`${attempt.url} retry=${attempt.retry} ${how}`),
  });

  for (const [name, auth] of [
    ['no authentication', { type: 'none' }],
    ['an API key', { type: 'header', header: 'x-api-key', apiKey: 'k-123' }],
    ['a bearer token', { type: 'bearer', token: 't-123' }],
  ] as const) {
    it(`with ${name}, a read reaches the transport in the call that makes it, and is answered`, async () => {
      const admitted: Attempt[] = [];
      const ended: string[] = [];
      const emsClient = client({ auth, attempts: recorder(admitted, ended) });
      const pending = emsClient.getMeasurement(DEV, 'soc');
      const admittedInCall = admitted.length;
      assert.equal((await pending).property, 'soc');
      assert.equal(admittedInCall, 1, 'admitted before the call returned');
      assert.deepEqual(ended, [`/devices/${DEV}/measurement?property=soc retry=false ok`]);
      if (auth.type === 'header') assert.equal(env.stub.hits[0].headers['x-api-key'], 'k-123');
      if (auth.type === 'bearer') assert.equal(env.stub.hits[0].headers.authorization, 'Bearer t-123');
    });
  }

  it('a read answered 503 then 200 is retried once, its second attempt marked a retry', async () => {
    let calls = 0;
    env.stub.handle = (_hit, res) => {
      calls++;
      if (calls === 1) json(res, 503, { message: 'busy' }, { 'retry-after': '0' });
      else json(res, 200, MEASUREMENT('soc'));
    };
    const admitted: Attempt[] = [];
    const ended: string[] = [];
    const emsClient = client({ retries: 2, retryBaseMs: 1, retryMaxMs: 2, attempts: recorder(admitted, ended) });
    assert.equal((await emsClient.getMeasurement(DEV, 'soc')).value, 42);
    assert.equal(env.stub.hits.length, 2);
    assert.deepEqual(ended, [
      `/devices/${DEV}/measurement?property=soc retry=false failure`,
      `/devices/${DEV}/measurement?property=soc retry=true ok`,
    ]);
  });
});
