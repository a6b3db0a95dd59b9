/**
 * What the raw request node's tests share: the node as the editor saves it, and the check that a
 * message is refused with one Catch-able error naming the field, the accepted form of a path and
 * the reason, with nothing sent.
 */
import assert from 'node:assert/strict';
import type { Loaded } from '../../helpers/red';

export const req = (extra: Record<string, unknown> = {}) => ({ type: 'ems-request', ...extra });
const FORM =
  'must be a path relative to the base URL starting with one "/", e.g. "/devices/dvc_1/measurement?property=soc"';

/** Sends msg and expects one Catch-able error naming `field`, the accepted form and `reason`; returns the Catch message. */
export async function refused(
  f: Loaded,
  msg: Record<string, unknown>,
  field: string,
  reason: string | RegExp,
): Promise<any> {
  const caught = await f.fails(msg);
  const text: string = caught.error.message;
  assert.ok(text.startsWith(`ValidationError: ${field} `), text);
  if (field.endsWith('path')) assert.ok(text.includes(FORM), text);
  if (typeof reason === 'string') assert.ok(text.endsWith(reason), `${text}\n  should end with: ${reason}`);
  else assert.match(text, reason);
  assert.equal(caught.statusCode, undefined, 'no answer: nothing was sent');
  return caught;
}
