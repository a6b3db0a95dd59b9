/**
 * A secret inside the base64 of a longer text (an echoed header block, a JSON body) lands at
 * one of three byte alignments; at each, the characters the secret alone determines are
 * masked, and only those: the text before and after stays readable. The expected strings are
 * worked out by hand from base64's 3-byte / 4-character groups, not by the code under test.
 */
import assert from 'node:assert/strict';
import { Redactor } from '../../src/client/errors';
import { ApiError, secretForms, serviceMessageOf } from '../../src/client';
import { MEASUREMENT, readResponse } from '../../src/client/responses';
import { formsOf } from '../helpers/hostile-server';
import { API_KEY, CLIENT_SECRET, leaks, TOKEN } from '../helpers/secrets';

const SECRET = 'S3cr3t-Value!'; // 13 bytes
const urlSafe = (b: string) => b.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** Prefix (its length mod 3 is the alignment), the base64 of prefix + secret + tail, and the masked base64. */
const CASES: Array<[string, string, string]> = [
  // 6 bytes before: the secret starts at character 8 and fills characters 8..24; character 25 mixes it with the tail.
  ['{"k":"', 'eyJrIjoiUzNjcjN0LVZhbHVlISIsIm1vcmUiOiJ0ZXh0In0=', 'eyJrIjoi***SIsIm1vcmUiOiJ0ZXh0In0='],
  // 7 bytes before: character 9 mixes the prefix with the secret's first bits; 10..25 are the secret's alone.
  ['{"ke":"', 'eyJrZSI6IlMzY3IzdC1WYWx1ZSEiLCJtb3JlIjoidGV4dCJ9', 'eyJrZSI6Il***EiLCJtb3JlIjoidGV4dCJ9'],
  // 8 bytes before: character 10 mixes; 11..26 are the secret's alone.
  ['{"key":"', 'eyJrZXkiOiJTM2NyM3QtVmFsdWUhIiwibW9yZSI6InRleHQifQ==', 'eyJrZXkiOiJ***IiwibW9yZSI6InRleHQifQ=='],
];

describe('redaction: a secret inside a longer base64 text, at each of the three alignments', () => {
  const redactor = new Redactor([SECRET]);
  for (const [prefix, b64, masked] of CASES) {
    it(`alignment ${prefix.length % 3}: masks exactly the characters the secret determines (standard and URL-safe)`, () => {
      assert.equal(
        Buffer.from(b64, 'base64').toString(),
        `${prefix}${SECRET}","more":"text"}`,
        'the case is the base64 it says',
      );
      assert.equal(redactor.text(b64), masked);
      assert.equal(redactor.text(`echo ${urlSafe(b64)} end`), `echo ${urlSafe(masked)} end`);
      // What is left decodes to the prefix and the tail, never to part of the secret.
      const [before, after] = masked.split('***');
      assert.ok(!Buffer.from(before, 'base64').toString('latin1').includes(SECRET.slice(0, 2)));
      for (const shift of [0, 1, 2, 3])
        assert.ok(
          !Buffer.from(after.slice(shift), 'base64').toString('latin1').includes(SECRET.slice(-2)),
          `tail, shift ${shift}`,
        );
    });
  }
});

/**
 * A hostile service echoes every credential it receives (API key, bearer
 * token, OAuth2 client secret, the OAuth2 access token it issued) raw, URL-encoded,
 * form-encoded and base64-encoded, in error messages, requestIds (body and x-request-id) and
 * deep inside steering answers. None of those forms may reach an error, a message, the log,
 * a status or an admin reply.
 */
describe('secret forms', () => {
  it('masks raw, URL-encoded, form-encoded and base64 forms, also inside a longer base64 text', () => {
    const redactor = new Redactor([CLIENT_SECRET]);
    for (const f of formsOf(CLIENT_SECRET)) assert.equal(redactor.text(`x ${f} y`), 'x *** y', f);
    assert.ok(
      secretForms(CLIENT_SECRET).includes(
        encodeURIComponent(CLIENT_SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      ),
    );
    for (const prefix of ['', 'a', 'ab', 'abc', '{"x-api-key":"']) {
      const b64 = Buffer.from(`${prefix}${CLIENT_SECRET}"}`).toString('base64');
      const masked = redactor.text(b64);
      assert.notEqual(masked, b64, `found at alignment of ${JSON.stringify(prefix)}`);
      assert.deepEqual(leaks(masked), []);
    }
    redactor.add(TOKEN);
    assert.equal(redactor.text(`Bearer ${TOKEN}`), 'Bearer ***');
    const body = { requestId: TOKEN, deep: [{ x: [encodeURIComponent(TOKEN)] }], n: 1 };
    assert.deepEqual(redactor.deep(body), { requestId: '***', deep: [{ x: ['***'] }], n: 1 });
  });

  it('masks before cutting a text to size, so no secret is shown in part', () => {
    const redactor = new Redactor([API_KEY]);
    const part = API_KEY.slice(0, 6);
    for (const pad of [110, 115, 190, 195]) {
      const field = serviceMessageOf({ message: `${'x'.repeat(pad)}${API_KEY}` }, (t) => redactor.text(t)) ?? '';
      const text = serviceMessageOf(`${'x'.repeat(pad)}${API_KEY}`, (t) => redactor.text(t)) ?? '';
      assert.ok(!field.includes(part) && !text.includes(part), `${field} / ${text}`);
    }
    for (const pad of [30, 35]) {
      const bad = {
        timestamp: 1,
        property: 'soc',
        value: `${'v'.repeat(pad)}${API_KEY}`,
        unit: '%',
        reference: 'dvc_a',
      };
      assert.throws(
        () => readResponse(MEASUREMENT, 200, bad, 'GET', '/x', redactor),
        (e: unknown) => {
          assert.ok(e instanceof ApiError && e.code === 'EMS_BAD_RESPONSE', String(e));
          assert.ok(!e.message.includes(part), e.message);
          assert.match(e.message, /with value "v+\*\*\*" \(a string, not a finite number\)/);
          return true;
        },
      );
    }
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
describe('client coverage: redaction and raw requests with hostile bodies and headers', () => {
  it('a redactor keeps at most 8 learnt secrets (the oldest go); one learnt twice is kept once', () => {
    const redactor = new Redactor(['configured-secret']);
    for (let i = 1; i <= 9; i++) redactor.add(`access-token-${i}`);
    redactor.add('access-token-9');
    redactor.add(undefined);
    assert.equal(redactor.secrets.length, 9, 'the configured one and the last 8');
    assert.equal(
      redactor.text('access-token-1 access-token-2 access-token-9 configured-secret'),
      'access-token-1 *** *** ***',
    );
  });

  it('a redactor walks parsed answers: strings masked at any depth, other values kept; past 64 levels it refuses', () => {
    const redactor = new Redactor(['top-s3cret']);
    const redacted = redactor.deep({ a: ['x top-s3cret', 7, null, true], b: { c: 'top-s3cret' }, n: 0 });
    assert.deepEqual(redacted, { a: ['x ***', 7, null, true], b: { c: '***' }, n: 0 });
    let deep: unknown = [];
    for (let i = 0; i < 70; i++) deep = [deep];
    assert.throws(() => redactor.deep(deep), RangeError);
    assert.equal(new Redactor().deep(deep), deep, 'no secret: nothing to walk');
  });
});
