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
} from '../src/client/errors';
import * as pub from '../src/index';

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

  it('the public entry is curated (issue 19.5): the client, the error classes, types, units, validators, the planner and the simulator; not the runtime nor internal helpers', () => {
    for (const name of [
      'EmsClient',
      'ApiError',
      'RateLimitError',
      'TimeoutError',
      'ValidationError',
      'validateActiveSteering',
      'parsePowerValue',
      'startSimulator',
    ]) {
      assert.equal(typeof (pub as Record<string, unknown>)[name], 'function', name);
    }
    for (const name of [
      'SteeringQueue',
      'ReadCoalescer',
      'PollScheduler',
      'createRuntime',
      'Transport',
      'show',
      'accepts',
      'refusal',
      'limited',
      'weightOf',
      'LIMITS',
    ]) {
      assert.equal((pub as Record<string, unknown>)[name], undefined, name);
    }
  });
});
