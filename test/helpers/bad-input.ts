/**
 * The bad-input checks the flow node tests share: each bad message gives exactly one Catch-able error
 * naming the field, from node `n`, with a red status and no output, and a good message afterwards
 * still gets its output; a node with a bad setting fails every message while a good one works.
 */
import assert from 'node:assert/strict';
import { cfg, flow, helper, loadFlow, type Loaded } from './red';
import type { SimBox } from './sim';

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

/**
 * The bad-setting check on the simulator `sim`: a node with a bad setting gets one error naming
 * the setting for every message; a good node of the same type in the same flow keeps working.
 */
export function badSettingOn(sim: SimBox) {
  async function badSetting(
    node: Record<string, unknown>,
    field: RegExp,
    goodNode: Record<string, unknown>,
    msg: Record<string, unknown> = {},
  ): Promise<void> {
    const deployed = await loadFlow(
      flow(node, cfg(sim.s.url), { ...goodNode, id: 'good', server: 'cfg', wires: [['out']] }),
    );
    for (let i = 0; i < 2; i++) {
      const caught = await deployed.fails(msg);
      assert.match(caught.error.message, field);
    }
    const nextOut = deployed.out.next();
    helper.getNode('good').receive(msg);
    await nextOut;
    assert.equal(deployed.caught.msgs.length, 2);
    assert.equal(deployed.out.msgs.length, 1);
  }
  return badSetting;
}
