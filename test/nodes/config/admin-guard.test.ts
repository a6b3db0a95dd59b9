/**
 * The checks behind the editor's admin routes (src/nodes/config/admin-guard.ts): which settings
 * count as "the same place" for stored credentials, the shape of a request body, and the
 * reply message (short, one line, redacted, never a page).
 */
import assert from 'node:assert/strict';
import { ValidationError } from '../../../src/protocol';
import { ApiError } from '../../../src/client';
import {
  destinationChanges,
  hasConfig,
  parseBody,
  redactDeep,
  replyError,
  replyMessage,
  RouteError,
  sameCaCert,
  secretForms,
  secretNeeded,
} from '../../../src/nodes/config/admin-guard';

const DEPLOYED = {
  simulator: false,
  baseUrl: 'https://ems.example.com/partner/v1',
  authType: 'header',
  apiKeyHeader: 'x-api-key',
  rejectUnauthorized: true,
  caCert: '',
};
const KEY = 'k-SECRET/+=?&42';

describe('admin guard: where stored credentials may go', () => {
  it('the same place, written differently, is the same destination', () => {
    for (const baseUrl of [
      'https://ems.example.com/partner/v1/',
      ' HTTPS://EMS.example.com:443/partner/v1 ',
      'https://ems.example.com/partner/v1//',
    ]) {
      assert.deepEqual(destinationChanges(DEPLOYED, { ...DEPLOYED, baseUrl }), [], baseUrl);
    }
    assert.deepEqual(
      destinationChanges(DEPLOYED, {
        ...DEPLOYED,
        apiKeyHeader: 'X-API-Key',
        rejectUnauthorized: 'true',
        timeout: 5,
      } as never),
      [],
    );
    assert.deepEqual(
      destinationChanges({ ...DEPLOYED, apiKeyHeader: '' }, { ...DEPLOYED, apiKeyHeader: undefined }),
      [],
      'the default header',
    );
  });

  it('names each setting that sends a secret elsewhere or less safely', () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ baseUrl: 'https://ems.example.com.evil.test/partner/v1' }, ['baseUrl']],
      [{ baseUrl: 'https://ems.example.com/partner/v1/../steal' }, ['baseUrl']],
      [{ baseUrl: 'https://attacker@ems.example.com/partner/v1' }, ['baseUrl']],
      [{ baseUrl: 'https://ems.example.com:8443/partner/v1' }, ['baseUrl']],
      [{ baseUrl: 'http://ems.example.com/partner/v1' }, ['baseUrl']],
      [{ baseUrl: 'https://ems.example.com/partner/v1?x=1' }, ['baseUrl']],
      [{ apiKeyHeader: 'x-forwarded-key' }, ['apiKeyHeader']],
      [{ authType: 'bearer', baseUrl: 'https://other.test' }, ['baseUrl', 'authType']],
      [{ simulator: true }, ['simulator']],
      [{ rejectUnauthorized: false }, ['rejectUnauthorized']],
      [{ caCert: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----' }, ['caCert']],
    ];
    for (const [change, names] of cases)
      assert.deepEqual(destinationChanges(DEPLOYED, { ...DEPLOYED, ...change }), names, JSON.stringify(change));
    const oauth = { ...DEPLOYED, authType: 'oauth2', tokenUrl: 'https://auth.example.com/token', clientId: 'c' };
    assert.deepEqual(destinationChanges(oauth, { ...oauth, tokenUrl: 'https://auth.example.com/token/' }), []);
    assert.deepEqual(destinationChanges(oauth, { ...oauth, tokenUrl: 'https://steal.test/token' }), ['tokenUrl']);
    assert.deepEqual(
      destinationChanges(oauth, { ...oauth, clientId: 'other', scope: 'all' }),
      [],
      'the secret still goes only to the same token URL',
    );
  });

  it('knows which secret a configuration sends, and when a caCert is the deployed one', () => {
    assert.equal(secretNeeded({ authType: 'header' }), 'apiKey');
    assert.equal(secretNeeded({ authType: 'bearer' }), 'apiKey');
    assert.equal(secretNeeded({ authType: 'oauth2' }), 'clientSecret');
    assert.equal(secretNeeded({ authType: 'none' }), undefined);
    assert.equal(secretNeeded({ authType: 'header', simulator: true }), undefined);
    assert.equal(sameCaCert({ caCert: '/etc/ssl/ca.pem' }, { caCert: ' /etc/ssl/ca.pem ' }), true);
    assert.equal(sameCaCert({ caCert: '/etc/ssl/ca.pem' }, { caCert: '/etc/passwd' }), false);
    assert.equal(sameCaCert(undefined, { caCert: '' }), false);
  });
});

describe('admin guard: request bodies', () => {
  it('takes known settings of plain types; a placeholder or empty secret is not a typed one', () => {
    const body = parseBody({
      server: 'cfg',
      config: {
        baseUrl: 'https://x.test',
        timeout: 5,
        simulator: false,
        apiKey: '__PWRD__',
        clientSecret: '',
        extra: { a: 1 },
        __proto__: { polluted: 1 },
      },
    });
    assert.equal(body.server, 'cfg');
    assert.deepEqual(body.config, { props: { baseUrl: 'https://x.test', timeout: 5, simulator: false }, typed: {} });
    assert.deepEqual(parseBody({ config: { apiKey: 'mine' } }).config?.typed, { apiKey: 'mine' });
    assert.deepEqual(parseBody({ server: 'cfg' }), { server: 'cfg' });
    assert.equal(hasConfig({ server: 'cfg', config: {} }), true);
    assert.equal(hasConfig({ server: 'cfg', config: null }), false);
    assert.equal(hasConfig(undefined), false);
  });

  it('refuses other shapes with a 400 naming the field', () => {
    const bad: Array<[unknown, string]> = [
      [[], 'bad body'],
      ['x', 'bad body'],
      [null, 'bad body'],
      [{ server: { $ne: '' } }, 'bad server'],
      [{ server: 'x'.repeat(101) }, 'bad server'],
      [{ config: [] }, 'bad config'],
      [{ config: 'https://x' }, 'bad config'],
      [{ config: { baseUrl: ['https://x'] } }, 'bad baseUrl'],
      [{ config: { caCert: { path: '/etc/passwd' } } }, 'bad caCert'],
      [{ config: { apiKey: 5 } }, 'bad apiKey'],
    ];
    for (const [body, error] of bad) {
      assert.throws(
        () => parseBody(body),
        (e: unknown) => e instanceof RouteError && e.status === 400 && e.error === error,
        JSON.stringify(body),
      );
    }
  });
});

describe('admin guard: reply messages', () => {
  const forms = secretForms([KEY]);
  const request = { method: 'GET', path: '/devices' };

  it('an HTML answer shows as status and reason phrase, without the page', () => {
    const page =
      '<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><script>alert(1)</script></body></html>';
    const err = new ApiError({
      code: 'HTTP_404',
      status: 404,
      serviceMessage: page,
      request,
      message: `GET /devices failed: HTTP 404 ${page}`,
    });
    assert.equal(replyMessage(err, forms), 'GET /devices failed: HTTP 404 (Not Found)');
    assert.equal(replyError(err), 'HTTP 404');
    const titled = new ApiError({
      code: 'HTTP_404',
      status: 404,
      serviceMessage: '404 Not Found',
      request,
      message: 'GET /devices failed: HTTP 404 404 Not Found',
    });
    assert.equal(
      replyMessage(titled, forms),
      'GET /devices failed: HTTP 404 (Not Found)',
      'a title that repeats the status adds nothing',
    );
    const said = new ApiError({
      code: 'HTTP_404',
      status: 404,
      serviceMessage: 'unknown device',
      request,
      message: 'x',
    });
    assert.equal(replyMessage(said, forms), 'GET /devices failed: HTTP 404 (Not Found): unknown device');
  });

  it('a plain service message is kept, redacted in every form, on one line of at most 120 characters', () => {
    const echoed = `bad key ${KEY} / ${encodeURIComponent(KEY)} / ${Buffer.from(KEY).toString('base64')}\n${'x'.repeat(300)}`;
    const err = new ApiError({ code: 'HTTP_401', status: 401, serviceMessage: echoed, request, message: 'irrelevant' });
    const message = replyMessage(err, forms);
    assert.ok(message.startsWith('GET /devices failed: HTTP 401 (Unauthorized): bad key *** / *** / ***'), message);
    assert.ok(message.length <= 120 && !message.includes('\n'), message);
    const other = replyMessage(new Error(`connect to 127.0.0.1:9 failed\n<b>${KEY}</b>`), forms);
    assert.equal(other, 'connect to 127.0.0.1:9 failed ***');
    assert.equal(replyMessage(new ValidationError('apiKey', 'is required'), forms), 'apiKey is required');
    assert.equal(replyError(new ValidationError('apiKey', 'is required')), 'bad apiKey');
  });

  it('redacts every string of a successful reply', () => {
    const list = [
      { deviceReference: 'dvc_1', name: `echo ${Buffer.from(KEY).toString('base64url')}`, properties: [{ name: KEY }] },
    ];
    assert.deepEqual(redactDeep(list, forms), [
      { deviceReference: 'dvc_1', name: 'echo ***', properties: [{ name: '***' }] },
    ]);
    assert.equal(redactDeep(list, []), list, 'nothing to redact: the reply as it is');
  });
});
