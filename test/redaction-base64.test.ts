/**
 * A secret inside the base64 of a longer text (an echoed header block, a JSON body) lands at
 * one of three byte alignments; at each, the characters the secret alone determines are
 * masked, and only those: the text before and after stays readable. The expected strings are
 * worked out by hand from base64's 3-byte / 4-character groups, not by the code under test.
 */
import assert from 'node:assert/strict';
import { Redactor } from '../src/client/errors';

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
