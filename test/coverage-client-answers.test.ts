/**
 * The client room's edges (src/client), part 3: hostile answers. Every answer of the wrong
 * shape is one EMS_BAD_RESPONSE naming the field and what it held; error bodies give the
 * service's message however they carry it (OAuth2 style, nested, HTML with or without a title,
 * entities, long text) and never the page; raw requests refuse bodies they cannot send, relay
 * only the selected headers, and mask secrets in keys and values. A loopback stub
 * (test/helpers/stub-server.ts) answers each test as it needs.
 */
import assert from 'node:assert/strict';
import {
  ApiError,
  BadResponseError,
  EmsClient,
  Redactor,
  ValidationError,
  rawAnswerOf,
  serviceMessageOf,
} from '../src/client';
import { answerPayload, requestBody, selectHeaders } from '../src/client/any-endpoint';
import { requestPathProblem, requestUrl } from '../src/client/request-path';
import { DEV, SITE, json, startStub, type Stub } from './helpers/stub-server';

const M = { timestamp: 1, property: 'soc', value: 1, unit: '%', reference: DEV };

describe('client coverage: answers of the wrong shape name the field and what it held', function () {
  this.timeout(20_000);
  let stub: Stub;
  let c: EmsClient;
  let body: unknown;
  before(async () => {
    stub = await startStub((_h, res) => json(res, 200, body));
    c = new EmsClient({ baseUrl: stub.url, retries: 0, auth: { type: 'header', apiKey: 'k3y-s3cret-value' } });
  });
  after(async () => {
    c.close();
    await stub.close();
  });

  const CASES: Array<{ call: (c: EmsClient) => Promise<unknown>; endpoint: string; body: unknown; says: string }> = [
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: [M],
      says: 'with an array, expected a JSON measurement',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: 42,
      says: 'with 42 (not an object), expected',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: { ...M, unit: 5 },
      says: 'with unit 5 (not a string)',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: { ...M, reference: null },
      says: 'with reference null (not a string)',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: 'k3y-s3cret-value is down',
      says: 'with text that is not JSON',
    },
    {
      call: (c) => c.getMeasurement(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurement`,
      body: '   ',
      says: 'with an empty body',
    },
    {
      call: (c) => c.getMeasurementsMap(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements/map`,
      body: { reference: DEV, measurements: { soc: { value: 1, unit: 3 } } },
      says: 'with measurements.soc.unit 3 (not a string)',
    },
    {
      call: (c) => c.getMeasurementsList(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements`,
      body: { reference: DEV, measurements: [null] },
      says: 'with measurements[0] null (not an object)',
    },
    {
      call: (c) => c.getMeasurementsList(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements`,
      body: { reference: DEV, measurements: [{ ...M, timestamp: 'k3y-s3cret-value' }] },
      says: 'with measurements[0].timestamp "***" (a string, not a finite number)',
    },
    {
      call: (c) => c.getMeasurementsList(DEV, 'soc'),
      endpoint: `GET /devices/${DEV}/measurements`,
      body: { reference: DEV, measurements: [{ timestamp: 1, property: 'soc', value: 1 }] },
      says: 'with no measurements[0].unit',
    },
    {
      call: (c) => c.getTimeSeries(DEV, { property: 'soc', start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) }),
      endpoint: `POST /devices/${DEV}/measurements/time-series`,
      body: { time: ['yesterday'], data: [1] },
      says: 'with time[0] "yesterday" (a string, not an ISO 8601 time)',
    },
    { call: (c) => c.listDevices(), endpoint: 'GET /devices', body: { things: [] }, says: 'with no device list' },
    {
      call: (c) => c.listDevices(),
      endpoint: 'GET /devices',
      body: true,
      says: 'with true, expected a JSON device list',
    },
    {
      call: (c) => c.listDevices(),
      endpoint: 'GET /devices',
      body: null,
      says: 'with null, expected a JSON device list',
    },
    { call: (c) => c.listSites(), endpoint: 'GET /sites', body: [5], says: 'with sites[0] 5 (not an object)' },
    {
      call: (c) => c.listSites(),
      endpoint: 'GET /sites',
      body: { sites: [{}] },
      says: 'with no sites[0].siteReference',
    },
    {
      call: (c) => c.listSites(),
      endpoint: 'GET /sites',
      body: [{ siteReference: 's', devices: 'all' }],
      says: 'with sites[0].devices "all" (a string, not an array)',
    },
    {
      call: (c) => c.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      endpoint: `POST /sites/${SITE}/steering/ess`,
      body: [1],
      says: 'with an array, expected a JSON object',
    },
  ];

  for (const t of CASES) {
    it(`${t.endpoint} answering ${JSON.stringify(t.body).slice(0, 60)}: "${t.says}"`, async () => {
      body = t.body;
      await assert.rejects(t.call(c), (e) => {
        assert.ok(e instanceof BadResponseError, String(e));
        assert.equal(e.code, 'EMS_BAD_RESPONSE');
        assert.ok(e.message.startsWith(`${t.endpoint} answered 200 `), e.message);
        assert.ok(e.message.includes(t.says), e.message);
        assert.doesNotMatch(e.message, /s3cret/);
        return true;
      });
    });
  }

  it('a steering answer nested deeper than 64 levels is refused (not walked for secrets), naming why', async () => {
    let deep: unknown = { requestId: 'r' };
    for (let i = 0; i < 70; i++) deep = { inner: deep };
    body = deep;
    await assert.rejects(
      c.steerEss(SITE, { setting: { value: 1, unit: 'kW' }, validUntil: Date.now() + 600_000 }),
      (e) =>
        e instanceof BadResponseError &&
        /with a body it could not read \(nested deeper than 64 levels\)/.test(e.message),
    );
  });
});

describe("client coverage: the service's message from error bodies of every kind", function () {
  this.timeout(20_000);
  let stub: Stub;
  let c: EmsClient;
  let answer: { status: number; body: unknown };
  before(async () => {
    stub = await startStub((_h, res) => json(res, answer.status, answer.body));
    c = new EmsClient({ baseUrl: stub.url, retries: 0 });
  });
  after(async () => {
    c.close();
    await stub.close();
  });
  const messageOf = async (status: number, b: unknown): Promise<ApiError> => {
    answer = { status, body: b };
    try {
      await c.getMeasurement(DEV, 'soc');
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
    const e = await messageOf(500, `${'x'.repeat(100)}\n\t${'y'.repeat(100)}`);
    assert.equal(e.serviceMessage, `${'x'.repeat(100)} ${'y'.repeat(18)}…`);
    assert.equal(e.serviceMessage!.length, 120);
  });

  it('serviceMessageOf: nothing from no body or a body without any message field', () => {
    assert.equal(serviceMessageOf(undefined), undefined);
    assert.equal(serviceMessageOf(null), undefined);
    assert.equal(serviceMessageOf({ status: 'bad' }), undefined);
    assert.equal(serviceMessageOf(''), undefined);
  });
});

describe('client coverage: redaction and raw requests with hostile bodies and headers', () => {
  it('a redactor keeps at most 8 learnt secrets (the oldest go); one learnt twice is kept once', () => {
    const r = new Redactor(['configured-secret']);
    for (let i = 1; i <= 9; i++) r.add(`access-token-${i}`);
    r.add('access-token-9');
    r.add(undefined);
    assert.equal(r.secrets.length, 9, 'the configured one and the last 8');
    assert.equal(
      r.text('access-token-1 access-token-2 access-token-9 configured-secret'),
      'access-token-1 *** *** ***',
    );
  });

  it('a redactor walks parsed answers: strings masked at any depth, other values kept; past 64 levels it refuses', () => {
    const r = new Redactor(['top-s3cret']);
    const v = r.deep({ a: ['x top-s3cret', 7, null, true], b: { c: 'top-s3cret' }, n: 0 });
    assert.deepEqual(v, { a: ['x ***', 7, null, true], b: { c: '***' }, n: 0 });
    let deep: unknown = [];
    for (let i = 0; i < 70; i++) deep = [deep];
    assert.throws(() => r.deep(deep), RangeError);
    assert.equal(new Redactor().deep(deep), deep, 'no secret: nothing to walk');
  });

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
    ); // eslint-disable-line no-throw-literal
    assert.throws(() => requestBody(() => 1, 'POST', 'msg.payload'), refused(/got a function$/));
    assert.deepEqual(requestBody(Buffer.from('ab'), 'PATCH', 'msg.payload'), {
      data: Buffer.from('ab'),
      type: 'application/octet-stream',
    });
    assert.deepEqual(requestBody(null, 'GET', 'msg.payload'), {});
  });

  it('answer payloads: nothing is "", blank text stays text, bytes are text, a JSON key holding a secret is masked', () => {
    const r = new Redactor(['k3y-s3cret-value']);
    assert.equal(answerPayload(undefined, r), '');
    assert.equal(answerPayload(null, r), '');
    assert.equal(answerPayload('  \n', r), '  \n');
    assert.deepEqual(answerPayload(Buffer.from('{"a":1}'), r), { a: 1 });
    assert.equal(answerPayload(12, r), 12);
    assert.deepEqual(answerPayload('{"k3y-s3cret-value":"k3y-s3cret-value","ok":["x"]}', r), {
      '***': '***',
      ok: ['x'],
    });
    assert.deepEqual(answerPayload('{"a":1}', new Redactor()), { a: 1 }, 'no secret: parsed as is');
    // Echoed JSON-escaped, the secret is not in the text as it is; parsed, it is a key (and a value).
    const escaped = '{"\\u006b3y-s3cret-value":"k3y-s3cret-\\u0076alue","n":1}';
    assert.ok(!escaped.includes('k3y-s3cret-value'));
    assert.deepEqual(answerPayload(escaped, r), { '***': '***', n: 1 });
    let deep = '1';
    for (let i = 0; i < 70; i++) deep = `[${deep}]`;
    assert.equal(answerPayload(deep, r), deep, 'too deep to walk: kept as text');
  });

  it('answer headers: only the selected ones, joined when repeated, never the key header or credentials', () => {
    const r = new Redactor(['k3y-s3cret-value']);
    const h = selectHeaders(
      {
        'X-Request-Id': ['a', 'b'],
        'content-length': 12,
        etag: { weird: true },
        'x-api-key': 'k',
        'x-my-key': 'k',
        link: 'k3y-s3cret-value',
        'x-other': 'no',
      },
      r,
      'x-my-key',
    );
    assert.deepEqual(h, { 'x-request-id': 'a, b', 'content-length': '12', link: '***' });
    assert.deepEqual(selectHeaders(undefined, r), {});
    assert.deepEqual(selectHeaders({ toJSON: () => ({ date: 'today' }) }, r), { date: 'today' });
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
