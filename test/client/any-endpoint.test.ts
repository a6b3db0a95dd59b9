/**
 * The client room's edges (src/client), part 3: hostile answers. Every answer of the wrong
 * shape is one EMS_BAD_RESPONSE naming the field and what it held; error bodies give the
 * service's message however they carry it (OAuth2 style, nested, HTML with or without a title,
 * entities, long text) and never the page; raw requests refuse bodies they cannot send, relay
 * only the selected headers, and mask secrets in keys and values. A loopback stub
 * (test/helpers/stub-server.ts) answers each test as it needs.
 */
import assert from 'node:assert/strict';
import { Redactor, ValidationError, rawAnswerOf } from '../../src/client';
import { answerPayload, requestBody, selectHeaders } from '../../src/client/any-endpoint';
import { requestPathProblem, requestUrl } from '../../src/client/request-path';

describe('client coverage: redaction and raw requests with hostile bodies and headers', () => {
  it('raw bodies that cannot be sent are refused naming the field; nothing is built', () => {
    const refused = (re: RegExp) => (e: unknown) =>
      e instanceof ValidationError && e.field === 'msg.payload' && re.test(e.message);
    assert.throws(() => requestBody([1], 'GET', 'msg.payload'), refused(/must not be set for GET .*got an array$/));
    assert.throws(() => requestBody({ a: 1 }, 'GET', 'msg.payload'), refused(/got a object$/));
    assert.throws(() => requestBody('text', 'GET', 'msg.payload'), refused(/got a string$/));
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.throws(
      () => requestBody(circular, 'POST', 'msg.payload'),
      refused(/it cannot be sent as JSON \(Converting circular/),
    );
    assert.throws(
      () =>
        requestBody(
          {
            toJSON() {
              throw 'nope';
            },
          },
          'PUT',
          'msg.payload',
        ),
      refused(/\(not serialisable\)$/),
    );
    assert.throws(() => requestBody(() => 1, 'POST', 'msg.payload'), refused(/got a function$/));
    assert.deepEqual(requestBody(Buffer.from('ab'), 'PATCH', 'msg.payload'), {
      data: Buffer.from('ab'),
      type: 'application/octet-stream',
    });
    assert.deepEqual(requestBody(null, 'GET', 'msg.payload'), {});
  });

  it('answer payloads: nothing is "", blank text stays text, bytes are text, a JSON key holding a secret is masked', () => {
    const redactor = new Redactor(['k3y-s3cret-value']);
    assert.equal(answerPayload(undefined, redactor), '');
    assert.equal(answerPayload(null, redactor), '');
    assert.equal(answerPayload('  \n', redactor), '  \n');
    assert.deepEqual(answerPayload(Buffer.from('{"a":1}'), redactor), { a: 1 });
    assert.equal(answerPayload(12, redactor), 12);
    assert.deepEqual(answerPayload('{"k3y-s3cret-value":"k3y-s3cret-value","ok":["x"]}', redactor), {
      '***': '***',
      ok: ['x'],
    });
    assert.deepEqual(answerPayload('{"a":1}', new Redactor()), { a: 1 }, 'no secret: parsed as is');
    // Echoed JSON-escaped, the secret is not in the text as it is; parsed, it is a key (and a value).
    const escaped = '{"\\u006b3y-s3cret-value":"k3y-s3cret-\\u0076alue","n":1}';
    assert.ok(!escaped.includes('k3y-s3cret-value'));
    assert.deepEqual(answerPayload(escaped, redactor), { '***': '***', n: 1 });
    let deep = '1';
    for (let i = 0; i < 70; i++) deep = `[${deep}]`;
    assert.equal(answerPayload(deep, redactor), deep, 'too deep to walk: kept as text');
  });

  it('answer headers: only the selected ones, joined when repeated, never the key header or credentials', () => {
    const redactor = new Redactor(['k3y-s3cret-value']);
    const headers = selectHeaders(
      {
        'X-Request-Id': ['a', 'b'],
        'content-length': 12,
        etag: { weird: true },
        'x-api-key': 'k',
        'x-my-key': 'k',
        link: 'k3y-s3cret-value',
        'x-other': 'no',
      },
      redactor,
      'x-my-key',
    );
    assert.deepEqual(headers, { 'x-request-id': 'a, b', 'content-length': '12', link: '***' });
    assert.deepEqual(selectHeaders(undefined, redactor), {});
    assert.deepEqual(selectHeaders({ toJSON: () => ({ date: 'today' }) }, redactor), { date: 'today' });
    assert.equal(rawAnswerOf('a string'), undefined);
    assert.equal(rawAnswerOf(null), undefined);
  });

  it('request paths: an encoded control character, or a base URL that is not one, is refused before sending', () => {
    assert.equal(requestPathProblem('/a%0ab'), 'an encoded control character in the path');
    assert.throws(
      () => requestUrl('not a base', '/devices', 'msg.path'),
      (e) => e instanceof ValidationError && /it would leave the base URL$/.test(e.message),
    );
  });
});
