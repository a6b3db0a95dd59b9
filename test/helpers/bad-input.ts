/**
 * The bad-input check the flow node tests share: each bad message gives exactly one Catch-able error
 * naming the field, from node `n`, with a red status and no output; a good message afterwards still
 * gets its output.
 */
import assert from 'node:assert/strict';
import type { Loaded } from './red';

/** A bad message: its name, the message (or a function making it when sent) and what the error says. */
type Case = [string, Record<string, unknown> | (() => Record<string, unknown>), RegExp];

/** Sends each bad message, expecting one error naming the field and no output; then a good one. */
export async function check(f: Loaded, cases: Case[], good: Record<string, unknown>): Promise<any> {
  for (const [name, msg, field] of cases) {
    const caught = await f.fails(typeof msg === 'function' ? msg() : msg);
    assert.match(caught.error.message, field, `${name}: ${caught.error.message}`);
    assert.equal(caught.error.source.id, 'n');
    assert.equal(f.status.all.at(-1).fill, 'red', `${name}: red status`);
  }
  const ok = await f.ask(good);
  assert.equal(f.caught.msgs.length, cases.length, 'exactly one error per bad message');
  assert.equal(f.out.msgs.length, 1, 'no output for a bad message');
  return ok;
}
