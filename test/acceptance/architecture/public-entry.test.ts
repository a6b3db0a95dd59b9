/**
 * The error classes: one base (EmsError), ValidationError for refused input, and an
 * ApiError subclass per kind of failure, chosen by apiError() from the status, else the code.
 * Each class has its own name (as openai-node and ky do), so a Catch node shows e.g. "RateLimitError: …".
 */
import assert from 'node:assert/strict';
import * as pub from '../../../src/index';

describe('error classes', () => {
  it('the public entry is curated: the client, the error classes, types, units, validators, the planner and the simulator; not the runtime nor internal helpers', () => {
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
