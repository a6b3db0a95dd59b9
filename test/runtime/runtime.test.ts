/**
 * The runtime room's edges (src/runtime), part 2: delivery checks given hostile answers, bad
 * devices, aborted signals, very long waits and listeners that throw; building a runtime from
 * config-node settings that are wrong; the built-in simulator failing to start. Reads are a
 * fake coalescer that records what it was asked; time is a fake clock.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ValidationError } from '../../src/protocol';
import { authOf, createRuntime, isInsecureRemote, percentCurtailmentOf, type Runtime } from '../../src/runtime/runtime';

describe('runtime coverage: building a runtime from config-node settings that are wrong', function () {
  this.timeout(20_000);
  const runtimes: Runtime[] = [];
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-cov-'));
  });
  after(async () => {
    await Promise.all(runtimes.splice(0).map((rt) => rt.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const refused = (field: string, re?: RegExp) => (e: unknown) =>
    e instanceof ValidationError && e.field === field && (!re || re.test(e.message));

  it('authOf: each type needs its secret, named; an unknown type is refused; the key header defaults to x-api-key', () => {
    assert.deepEqual(authOf({ authType: 'header' }, { apiKey: 'k' }), {
      type: 'header',
      apiKey: 'k',
      header: 'x-api-key',
    });
    assert.deepEqual(authOf({ authType: 'bearer' }, { apiKey: 't' }), { type: 'bearer', token: 't' });
    assert.deepEqual(authOf({}, {}), { type: 'none' });
    assert.throws(() => authOf({ authType: 'header' }, {}), refused('apiKey', /authType is "header"/));
    assert.throws(() => authOf({ authType: 'bearer' }, { apiKey: '' }), refused('apiKey', /as the token/));
    assert.throws(
      () => authOf({ authType: 'oauth2', tokenUrl: 'https://a/t', clientId: 'c' }, {}),
      refused('authType', /tokenUrl, clientId and clientSecret/),
    );
    assert.throws(() => authOf({ authType: 'kerberos' }, {}), refused('authType', /got "kerberos"/));
  });

  it('percentCurtailment: "convert" by default, "send", anything else refused naming the field', () => {
    assert.equal(percentCurtailmentOf({}), 'convert');
    assert.equal(percentCurtailmentOf({ percentCurtailment: 'send' }), 'send');
    assert.throws(
      () => percentCurtailmentOf({ percentCurtailment: 'percent' }),
      refused('percentCurtailment', /got "percent"/),
    );
  });

  it('isInsecureRemote: only plain http to another machine', () => {
    assert.equal(isInsecureRemote('https://api.example.com'), false);
    assert.equal(isInsecureRemote(undefined), false);
    for (const local of ['http://localhost:1880', 'http://127.0.0.5/x', 'http://[::1]:8080'])
      assert.equal(isInsecureRemote(local), false, local);
    assert.equal(isInsecureRemote('HTTP://api.example.com'), true);
    assert.equal(isInsecureRemote('http://[nope'), false, 'not a URL: not judged here');
  });

  it('createRuntime: no base URL, a CA file that cannot be read, or a CA path from an admin request are refused naming the field', async () => {
    await assert.rejects(createRuntime({ baseUrl: '   ' }, {}), refused('baseUrl', /is required/));
    await assert.rejects(
      createRuntime({ baseUrl: 'http://127.0.0.1:9', caCert: path.join(dir, 'missing.pem') }, {}),
      refused('caCert', /readable PEM file/),
    );
    await assert.rejects(
      createRuntime({ baseUrl: 'http://127.0.0.1:9', caCert: path.join(dir, 'missing.pem') }, {}, undefined, {
        readFiles: false,
      }),
      refused('caCert', /only from a deployed config node/),
    );
  });

  it('createRuntime: a CA given as a file is read; PEM text is taken as it is; without a budget id the runtime counts on its own', async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const file = path.join(dir, 'ca.pem');
    fs.writeFileSync(file, pem);
    const fromFile = await createRuntime({ baseUrl: 'https://127.0.0.1:9', caCert: ` ${file} ` }, {});
    runtimes.push(fromFile);
    const fromPem = await createRuntime({ baseUrl: 'https://127.0.0.1:9', caCert: pem }, {}, undefined, {
      readFiles: false,
    });
    runtimes.push(fromPem);
    assert.notEqual(fromFile.budget, fromPem.budget, 'each its own budget');
    assert.equal(fromFile.budget.stats().total.sent, 0);
  });
});
