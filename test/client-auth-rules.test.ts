/**
 * What a client refuses as it is made, before anything is sent (src/client/auth.ts checkAuth,
 * src/client/request-path.ts): an API-key header that is not an HTTP token or that the transport
 * sets, and a line break or control character in a key, token, secret or URL (refused, not
 * stripped: a URL parser and the HTTP library drop them, so what was sent was not what was set).
 * The refusal names the field and never the secret.
 */
import assert from 'node:assert/strict';
import { EmsClient, ValidationError, type AuthConfig } from '../src/client';

const SECRET = 'k-SECRET-rules-77';

function refusal(baseUrl: string, auth: AuthConfig): ValidationError {
  try {
    new EmsClient({ baseUrl, auth }).close();
  } catch (e) {
    assert.ok(e instanceof ValidationError, String(e));
    assert.ok(!e.message.includes(SECRET), e.message);
    return e;
  }
  assert.fail(`accepted ${JSON.stringify({ baseUrl, auth })}`);
}

describe('client: authentication and base URL checked as a client is made', () => {
  const base = 'https://api.example.com/v1';

  it('refuses a line break or control character in the base URL, a bearer token and every OAuth2 setting, naming the field', () => {
    assert.equal(refusal('https://api.example.com\n.evil.test/v1', { type: 'none' }).field, 'baseUrl');
    assert.equal(refusal('https://api.example.com/v1\t', { type: 'none' }).field, 'baseUrl');
    const bearer = refusal(base, { type: 'bearer', token: `${SECRET}\r\nx-evil: 1` });
    assert.equal(bearer.field, 'apiKey');
    assert.match(bearer.message, /^apiKey holds a line break \(character 18 of 28\); it is refused, not removed/);
    assert.match(
      refusal(base, { type: 'header', apiKey: `${SECRET}\u0000` }).message,
      /^apiKey holds a control character/,
    );
    const oauth = {
      type: 'oauth2',
      tokenUrl: 'https://auth.example.com/token',
      clientId: 'id',
      clientSecret: SECRET,
      scope: 'read',
    } as const;
    for (const k of ['tokenUrl', 'clientId', 'clientSecret', 'scope'] as const) {
      assert.equal(refusal(base, { ...oauth, [k]: `${oauth[k]}\n` }).field, k);
    }
  });

  it('refuses a key header that is not an HTTP token or that the transport sets; accepts a token, and the default when none is set', () => {
    for (const header of [
      'X-Evil: injected\r\nx-api-key',
      'x api key',
      'host',
      'Content-Length',
      'transfer-encoding',
      'proxy-authorization',
      'TE',
    ]) {
      const refused = refusal(base, { type: 'header', apiKey: SECRET, header });
      assert.equal(refused.field, 'apiKeyHeader');
      assert.ok(refused.message.startsWith(`apiKeyHeader ${JSON.stringify(header)} `), refused.message);
    }
    for (const header of ['x-api-key', 'Ocp-Apim-Subscription-Key', 'authorization', '', undefined])
      new EmsClient({ baseUrl: base, auth: { type: 'header', apiKey: SECRET, header } }).close();
  });
});
