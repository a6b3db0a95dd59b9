/**
 * The error classes: one base (EmsError), ValidationError for refused input, and an
 * ApiError subclass per kind of failure, chosen by apiError() from the status, else the code.
 * Each class has its own name (as openai-node and ky do), so a Catch node shows e.g. "RateLimitError: …".
 */
import assert from 'node:assert/strict';
import {
  AbortedError,
  ApiError,
  AuthenticationError,
  BadResponseError,
  DroppedError,
  EmsError,
  HttpError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  RefusedError,
  ServerError,
  TimeoutError,
  ValidationError,
  apiError,
} from '../../src/client/errors';
import { redact, serviceMessageOf, EmsClient } from '../../src/client';
import { DEV, json, startStub, type Stub } from '../helpers/stub-server';

const req = { method: 'GET', path: '/devices' };
const make = (o: { status?: number; code?: string }) =>
  apiError({ message: 'm', code: o.code ?? `HTTP_${o.status}`, request: req, status: o.status });

describe('error classes', () => {
  it('apiError picks the subclass by status', () => {
    const cases: Array<[number, abstract new (...args: never[]) => Error]> = [
      [429, RateLimitError],
      [401, AuthenticationError],
      [403, AuthenticationError],
      [404, NotFoundError],
      [400, RefusedError],
      [409, RefusedError],
      [422, RefusedError],
      [500, ServerError],
      [503, ServerError],
      [302, HttpError],
    ];
    for (const [status, cls] of cases) {
      const error = make({ status });
      assert.ok(error instanceof cls, `${status} -> ${cls.name}`);
      assert.ok(
        error instanceof HttpError && error instanceof ApiError && error instanceof EmsError && error instanceof Error,
      );
      assert.equal(error.status, status);
      assert.equal(error.code, `HTTP_${status}`);
    }
  });

  it('apiError picks the subclass by code when there is no status', () => {
    const cases: Array<[string, abstract new (...args: never[]) => Error]> = [
      ['ECONNREFUSED', NetworkError],
      ['ECONNRESET', NetworkError],
      ['ENOTFOUND', NetworkError],
      ['ETIMEDOUT', TimeoutError],
      ['ECONNABORTED', TimeoutError],
      ['EMS_ABORTED', AbortedError],
      ['EMS_CLOSED', AbortedError],
      ['EMS_DROPPED', DroppedError],
      ['EMS_BAD_RESPONSE', BadResponseError],
      ['EMS_TOO_LARGE', BadResponseError],
    ];
    for (const [code, cls] of cases) {
      const error = make({ code });
      assert.ok(error instanceof cls, `${code} -> ${cls.name}`);
      assert.ok(!(error instanceof HttpError));
      assert.equal(error.code, code);
    }
  });

  it('keeps the message and code; the name is the class', () => {
    const error = apiError({
      message: 'GET /devices failed: HTTP 429',
      code: 'HTTP_429',
      request: req,
      status: 429,
      retryAfter: 2,
      requestId: 'r1',
    });
    assert.equal(String(error), 'RateLimitError: GET /devices failed: HTTP 429');
    assert.deepEqual([error.code, error.retryAfter, error.requestId, error.request], ['HTTP_429', 2, 'r1', req]);
    const validationError = new ValidationError('msg.payload', 'must be a number');
    assert.ok(validationError instanceof EmsError);
    assert.equal(String(validationError), 'ValidationError: msg.payload must be a number');
    assert.deepEqual([validationError.code, validationError.field], ['EMS_VALIDATION', 'msg.payload']);
  });
});

describe('errors', () => {
  it('reads the service message from the usual fields', () => {
    assert.equal(serviceMessageOf({ message: 'a' }), 'a');
    assert.equal(serviceMessageOf({ error: 'b' }), 'b');
    assert.equal(serviceMessageOf({ error: { message: 'c' } }), 'c');
    assert.equal(serviceMessageOf({ detail: 'd' }), 'd');
    assert.equal(serviceMessageOf({ title: 'e' }), 'e');
  });
  it('redacts every secret', () => {
    assert.equal(redact('key=s3cret and s3cret', ['s3cret', undefined]), 'key=*** and ***');
  });
  it('redacts URL-encoded, form-encoded and base64 forms of a secret', () => {
    const secret = 'a b/c+d=e&f~!';
    const forms = [
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
    ];
    for (const f of forms) assert.equal(redact(`id ${f}.`, [secret]), 'id ***.', f);
  });
  it('relays an HTML page as its title or a short single line, never the page', () => {
    const page = '<!DOCTYPE html><html><head><title>502 Bad &amp; Gateway</title></head><body><h1>x</h1></body></html>';
    assert.equal(serviceMessageOf(page), '502 Bad & Gateway');
    const untitled = `<html><body><h1>Down</h1>\n<p>${'for maintenance '.repeat(20)}</p></body></html>`;
    const message = serviceMessageOf(untitled) ?? '';
    assert.ok(
      message.startsWith('Down for maintenance') &&
        message.length <= 120 &&
        !message.includes('<') &&
        !message.includes('\n'),
      message,
    );
    assert.equal(serviceMessageOf(`  plain\ntext ${'x'.repeat(500)}`)?.length, 120);
    assert.equal(serviceMessageOf({ message: `a\nb ${'y'.repeat(1000)}` })?.length, 200);
  });
});

/**
 * The client room's edges (src/client), part 3: hostile answers. Every answer of the wrong
 * shape is one EMS_BAD_RESPONSE naming the field and what it held; error bodies give the
 * service's message however they carry it (OAuth2 style, nested, HTML with or without a title,
 * entities, long text) and never the page; raw requests refuse bodies they cannot send, relay
 * only the selected headers, and mask secrets in keys and values. A loopback stub
 * (test/helpers/stub-server.ts) answers each test as it needs.
 */
describe("client coverage: the service's message from error bodies of every kind", function () {
  this.timeout(20_000);
  let stub: Stub;
  let client: EmsClient;
  let answer: { status: number; body: unknown };
  before(async () => {
    stub = await startStub((_h, res) => json(res, answer.status, answer.body));
    client = new EmsClient({ baseUrl: stub.url, retries: 0 });
  });
  after(async () => {
    client.close();
    await stub.close();
  });
  const messageOf = async (status: number, b: unknown): Promise<ApiError> => {
    answer = { status, body: b };
    try {
      await client.getMeasurement(DEV, 'soc');
    } catch (e) {
      assert.ok(e instanceof ApiError, String(e));
      return e;
    }
    throw new Error('no error');
  };

  it('OAuth2 style, a nested error.message, none at all, a bare number', async () => {
    assert.equal(
      (await messageOf(400, { error: 'invalid_request', error_description: 'property unknown' })).serviceMessage,
      'invalid_request: property unknown',
    );
    assert.equal((await messageOf(409, { error: { message: 'busy steering' } })).serviceMessage, 'busy steering');
    const none = await messageOf(422, { error: { code: 7 }, detail: '   ' });
    assert.equal(none.serviceMessage, undefined);
    assert.equal(none.message, `GET /devices/${DEV}/measurement failed: HTTP 422`);
    assert.equal((await messageOf(500, 42)).serviceMessage, undefined);
    assert.equal(
      (await messageOf(400, { error: 7, error_description: 'only the description' })).serviceMessage,
      'only the description',
    );
    const blankId = await messageOf(500, { message: 'x', requestId: ' \n\t ' });
    assert.equal(blankId.requestId, undefined, 'a blank requestId is none');
    assert.equal(blankId.message, `GET /devices/${DEV}/measurement failed: HTTP 500 x`);
  });

  it('HTML pages: the title with entities decoded, else a short excerpt of the text, else "an HTML page"', async () => {
    assert.equal(
      (await messageOf(502, '<html><head><title>Down &amp; out &#x41;&#66; &bogus; &#0;</title></head></html>'))
        .serviceMessage,
      'Down & out AB &bogus; &#0;',
    );
    assert.equal((await messageOf(502, '<html><head><title>never closed')).serviceMessage, 'never closed');
    assert.equal((await messageOf(503, '<html><body><p>Back&nbsp;soon</p></body></html>')).serviceMessage, 'Back soon');
    assert.equal((await messageOf(503, '<html><body><br/></body></html>')).serviceMessage, 'an HTML page');
    assert.equal(
      (await messageOf(503, '<html><head><title')).serviceMessage,
      '<title',
      'a cut-off tag: the text as it is, never the page',
    );
  });

  it('a long text body gives its first 120 characters, on one line', async () => {
    const message = await messageOf(500, `${'x'.repeat(100)}\n\t${'y'.repeat(100)}`);
    assert.equal(message.serviceMessage, `${'x'.repeat(100)} ${'y'.repeat(18)}…`);
    assert.equal(message.serviceMessage!.length, 120);
  });

  it('serviceMessageOf: nothing from no body or a body without any message field', () => {
    assert.equal(serviceMessageOf(undefined), undefined);
    assert.equal(serviceMessageOf(null), undefined);
    assert.equal(serviceMessageOf({ status: 'bad' }), undefined);
    assert.equal(serviceMessageOf(''), undefined);
  });
});
