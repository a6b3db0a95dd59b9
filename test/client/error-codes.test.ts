/**
 * Every error code the source uses, driven through apiError(): the list is read
 * from the source itself, so a new code cannot be missed. apiError() must answer a typed
 * ApiError for each of them (it once called itself for EMS_EMPTY, EMS_AUTH, EMS_ERROR and
 * EMS_MISSING and overflowed the stack), the class the table names, and keep code and message.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  ApiError,
  AuthenticationError,
  BadResponseError,
  ERROR_CODE_CLASSES,
  EmptyRequestError,
  NetworkError,
  apiError,
} from '../../src/client/errors';

const SRC = path.resolve(__dirname, '..', '..', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? sources(file) : e.name.endsWith('.ts') ? [file] : [];
  });
}

const TEXT = sources(SRC).map((f) => ({ file: path.relative(SRC, f), text: fs.readFileSync(f, 'utf8') }));

/** Every `code: '...'` literal handed to apiError() anywhere in src/. */
function codesPassedToApiError(): Map<string, string> {
  const out = new Map<string, string>();
  for (const { file, text } of TEXT) {
    for (const m of text.matchAll(/apiError\(\{[^]*?code:\s*([^,}]+)/g)) {
      const expr = m[1].trim();
      for (const lit of expr.matchAll(/'([A-Z][A-Z0-9_]+)'/g)) out.set(lit[1], file);
    }
  }
  return out;
}

/** Every code-like string literal in src/ (EMS_*, E* system codes, ERR_*). */
function everyCodeLiteral(): Set<string> {
  const out = new Set<string>();
  for (const { text } of TEXT) {
    for (const m of text.matchAll(/'((?:EMS|ERR)_[A-Z0-9_]+|E[A-Z]{4,})'/g)) out.add(m[1]);
  }
  return out;
}

const req = { method: 'GET', path: '/devices/dvc_a/measurement' };

describe('error codes: every code the source uses, through apiError()', () => {
  const passed = codesPassedToApiError();
  const all = everyCodeLiteral();

  it('finds the codes (the scan itself works)', () => {
    for (const c of [
      'EMS_EMPTY',
      'EMS_AUTH',
      'EMS_ERROR',
      'EMS_MISSING',
      'EMS_ABORTED',
      'EMS_BUDGET',
      'EMS_TOO_LARGE',
    ]) {
      assert.ok(passed.has(c), `${c} is passed to apiError() somewhere in src/`);
    }
    assert.ok(all.size >= passed.size);
  });

  it('every code passed to apiError() has a class in ERROR_CODE_CLASSES', () => {
    const missing = [...passed].filter(([c]) => !(c in ERROR_CODE_CLASSES)).map(([c, f]) => `${c} (${f})`);
    assert.deepEqual(missing, [], 'add each to ERROR_CODE_CLASSES in src/client/errors.ts');
  });

  it('every code literal of the source makes a typed ApiError, with and without a status, and never recurses', () => {
    for (const code of all) {
      for (const status of [undefined, 401, 404, 429, 500]) {
        const error = apiError({ code, status, message: `m ${code}`, request: req });
        assert.ok(error instanceof ApiError, code);
        assert.equal(error.code, code);
        assert.equal(error.message, `m ${code}`);
        assert.equal(error.status, status);
        assert.equal(error.name, error.constructor.name, 'each class its own name');
        if (status === undefined) {
          const cls = ERROR_CODE_CLASSES[code] ?? NetworkError;
          assert.equal(error.constructor, cls, `${code} -> ${cls.name}, got ${error.constructor.name}`);
        }
      }
    }
  });

  it('the four codes that once overflowed the stack', () => {
    const of = (code: string) => apiError({ code, message: code, request: req });
    assert.ok(of('EMS_AUTH') instanceof AuthenticationError);
    assert.ok(
      apiError({ code: 'EMS_AUTH', status: 500, message: 'token 500', request: req }) instanceof AuthenticationError,
      'a token failure stays an authentication failure',
    );
    assert.ok(of('EMS_EMPTY') instanceof EmptyRequestError);
    assert.ok(of('EMS_MISSING') instanceof BadResponseError);
    assert.ok(of('EMS_ERROR') instanceof NetworkError);
  });

  it('an unknown code is a NetworkError, not a crash; ERROR_CODE_CLASSES cannot be changed at run time', () => {
    assert.ok(apiError({ code: 'EPROTO', message: 'x', request: req }) instanceof NetworkError);
    assert.ok(
      apiError({ code: 'constructor', message: 'x', request: req }) instanceof NetworkError,
      'no prototype key is taken for a class',
    );
    assert.ok(Object.isFrozen(ERROR_CODE_CLASSES));
  });
});
