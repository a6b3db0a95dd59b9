/**
 * A stored schedule that cannot be read is never written over: in a real Node-RED with a
 * file context store (localfilesystem) that already holds a bad value under the node's key
 * (`ems-schedule`): wrong types, another version, 200,000 runs, not an object, or a schedule
 * beyond the node's current limits. After the deploy the node reports one error that names
 * the key the value came from and the key it is kept under (`ems-schedule-unread-<time>`), and
 * the value is there, as it was; after a new schedule arrives (and is saved under the node's
 * key) it is still there. A store that cannot keep it elsewhere: nothing is written over it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QUARTER_HOUR_MS } from '../../../src/protocol/time';
import { DEFAULT_SITES, startSimulator, type StartedSimulator } from '../../../src/simulator';
import { NODES, callsOf, cfg, flow, helper, useRuntime } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';

const SITE = DEFAULT_SITES[0].siteReference;
const T0 = Math.ceil((Date.now() + 2 * 3_600_000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
const slotAt = (i: number, v: number) => ({
  start: T0 + i * QUARTER_HOUR_MS,
  end: T0 + (i + 1) * QUARTER_HOUR_MS,
  energyStorage: v,
});
const run = (v: number) => ({
  site: SITE,
  start: T0,
  end: T0 + QUARTER_HOUR_MS,
  first: 0,
  last: 0,
  total: 1,
  slots: [{ index: 0, start: T0, end: T0 + QUARTER_HOUR_MS }],
  setting: { energyStorageSetting: { value: v, unit: 'kW' } },
});
const realSetTimeout = setTimeout;

/** Each bad form, and what the error says about it. */
const BAD: Array<[string, unknown, RegExp]> = [
  ['wrong types: runs a text', { v: 1, runs: 'many' }, /stored schedule\.runs must be an array of runs; got "many"/],
  ['wrong types in a run', { v: 1, runs: [{ ...run(-50), start: 'soon' }] }, /stored schedule\.runs\[0\]\.start /],
  [
    'an unknown version',
    { v: 99, runs: [run(-50)] },
    /stored schedule\.v must be 1, the version this node saves and reads; got 99/,
  ],
  [
    '200,000 runs',
    { v: 1, runs: new Array(200_000).fill(0) },
    /stored schedule\.runs must have at most 2000 runs; got 200000/,
  ],
  ['not an object', 'garbage', /stored schedule must be the object this version saves .*; got "garbage"/],
  [
    "beyond the node's current limits",
    { v: 1, runs: [run(-500)] },
    /stored schedule\.runs\[0\]\.setting\.energyStorage must be within the node's limit maxEssPower = 150000 W/,
  ],
];

describe('ems-schedule: a stored schedule that cannot be read is kept, never written over', () => {
  let dir: string;
  let sim: StartedSimulator;
  /** A store (module given as an object) that refuses to write keys starting with `ems-schedule-unread`. */
  const refusing = {
    data: new Map<string, Record<string, unknown>>(),
    open: async () => undefined,
    close: async () => undefined,
    get(scope: string, key: string, cb: (e: unknown, v?: unknown) => void) {
      cb(null, this.data.get(scope)?.[key]);
    },
    set(scope: string, key: string, value: unknown, cb: (e: unknown) => void) {
      if (key.startsWith('ems-schedule-unread')) return cb(new Error('disk full'));
      const values = this.data.get(scope) ?? {};
      if (value === undefined) delete values[key];
      else values[key] = value;
      this.data.set(scope, values);
      cb(null);
    },
    keys(scope: string, cb: (e: unknown, v?: string[]) => void) {
      cb(null, Object.keys(this.data.get(scope) ?? {}));
    },
    delete: async (scope: string) => {
      refusing.data.delete(scope);
    },
    clean: async () => undefined,
  };
  let base: string;
  before(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-schedule-unread-'));
  });
  after(() => {
    helper.settings({});
    fs.rmSync(base, { recursive: true, force: true });
  });
  // A directory of its own per test: the helper's unload lets Node-RED delete the context of
  // every node in the background, which must not reach the next test's file.
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(base, 'store-'));
    const file = { module: 'localfilesystem', config: { dir, cache: false } };
    helper.settings({ contextStorage: { default: { module: 'memory' }, file, refusing: { module: () => refusing } } });
  });
  useRuntime();
  beforeEach(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterEach(async () => {
    await sim.close();
  });

  // Each test has a node id of its own: a stopped node hands its state to the next node of its
  // id (a redeploy), which then does not read the store.
  let id = 'n';
  let nodeCount = 0;
  beforeEach(() => {
    id = `n${++nodeCount}`;
  });
  const file = () => path.join(dir, 'context', 'tab', `${id}.json`);
  /** The file store's content for node `n` once it passes `test` (it writes in the background; real time, bounded). */
  async function stored(test: (v: any) => boolean): Promise<any> {
    let content: any;
    for (let i = 0; i < 500; i++) {
      try {
        content = JSON.parse(fs.readFileSync(file(), 'utf8'));
        if (test(content)) return content;
      } catch {
        /* not written yet */
      }
      await new Promise((r) => realSetTimeout(r, 10));
    }
    assert.fail(`the file store holds ${JSON.stringify(content)?.slice(0, 300)}`);
  }
  /** Deploys the schedule node on `store` (the stores loaded first); resolves with its first error message. */
  async function deploy(store: string, extra: Record<string, unknown> = {}): Promise<{ node: any; error: string }> {
    await helper.load(NODES, [{ id: 'tab', type: 'tab', label: 'test' }]);
    await helper._context.load();
    await helper.setFlows(
      flow(scheduleNode({ id, store, ...extra }), cfg(sim.url), { id: 'reports', type: 'helper', wires: [] }),
      'full',
    );
    for (let i = 0; i < 500 && callsOf('error', id).length === 0; i++) await new Promise((r) => realSetTimeout(r, 10));
    const errors = callsOf('error', id);
    assert.equal(
      errors.length,
      1,
      `one error at deploy; statuses ${JSON.stringify(callsOf('status', id).map((c) => c[0]?.text))}, warnings ${JSON.stringify(callsOf('warn', id).map((c) => String(c[0])))}, file ${fs.existsSync(file()) ? fs.readFileSync(file(), 'utf8').slice(0, 200) : 'none'}`,
    );
    return { node: helper.getNode(id), error: String(errors[0][0].message) };
  }
  /** Sends a schedule and waits until the node took it (its status says what it waits for). */
  async function accept(node: any, payload: unknown): Promise<void> {
    const from = callsOf('status', id).length;
    node.receive({ payload });
    for (let i = 0; i < 500; i++) {
      if (
        callsOf('status', id)
          .slice(from)
          .some((a) => /^waiting: /.test(a[0]?.text ?? ''))
      )
        return;
      await new Promise((r) => realSetTimeout(r, 10));
    }
    assert.fail('the schedule was not taken');
  }

  for (const [name, bad, why] of BAD) {
    it(`${name}: kept under its own key, named in the error; still there after a new schedule`, async () => {
      fs.mkdirSync(path.dirname(file()), { recursive: true });
      fs.writeFileSync(file(), JSON.stringify({ 'ems-schedule': bad, 'ems-schedule-unread-1': 'an earlier find' }));
      const { node, error } = await deploy('file', { maxEssPower: 150_000 });
      assert.match(error, /^stored schedule not resumed: /);
      assert.match(error, why);
      const key = /kept as it was under context key "(ems-schedule-unread-\d+)"/.exec(error)?.[1];
      assert.ok(key, `the error names the key it is kept under: ${error}`);
      assert.match(
        error,
        /the value of context key "ems-schedule" of store "file" is kept/,
        'and the key it came from',
      );
      let ctx = await stored((v) => v[key] !== undefined && v['ems-schedule'] === undefined);
      assert.deepEqual(ctx[key].value, bad, 'kept as it was');
      assert.equal(ctx[key].key, 'ems-schedule');
      assert.match(ctx[key].at, /^\d{4}-\d\d-\d\dT/);
      assert.match(ctx[key].error, why);
      assert.equal(ctx['ems-schedule-unread-1'], 'an earlier find', 'an earlier find is not written over');
      assert.equal(sim.sim.requestLog.filter((e) => /steering/.test(e.route)).length, 0, 'nothing of it sent');

      await accept(node, [slotAt(0, -20), slotAt(1, -10)]);
      ctx = await stored((v) => v['ems-schedule']?.runs?.length === 2);
      assert.deepEqual(ctx[key].value, bad, 'still there after a new schedule was saved');
      assert.equal(ctx['ems-schedule-unread-1'], 'an earlier find');
    });
  }

  it('a run in force that cannot be read: the schedule resumes without it, and the whole stored value is kept first, named in a warning', async () => {
    const bad = { v: 1, runs: [run(-50)], inForce: run(-500) };
    fs.mkdirSync(path.dirname(file()), { recursive: true });
    fs.writeFileSync(file(), JSON.stringify({ 'ems-schedule': bad }));
    await helper.load(NODES, [{ id: 'tab', type: 'tab', label: 'test' }]);
    await helper._context.load();
    await helper.setFlows(
      flow(scheduleNode({ id, store: 'file', maxEssPower: 150_000 }), cfg(sim.url), {
        id: 'reports',
        type: 'helper',
        wires: [],
      }),
      'full',
    );
    for (let i = 0; i < 500 && callsOf('warn', id).length === 0; i++) await new Promise((r) => realSetTimeout(r, 10));
    const warning = String(callsOf('warn', id)[0]?.[0]);
    assert.match(
      warning,
      /^stored schedule: the run in force was left out: stored schedule\.inForce\.setting\.energyStorage must be within .*; the value of context key "ems-schedule" of store "file" is kept as it was under context key "ems-schedule-unread-\d+"/,
    );
    const key = /"(ems-schedule-unread-\d+)"/.exec(warning)![1];
    const ctx = await stored(
      (v) => v[key] !== undefined && v['ems-schedule']?.inForce === undefined && v['ems-schedule']?.runs?.length === 1,
    );
    assert.deepEqual(ctx[key].value, bad, 'kept as it was, before the resumed schedule was saved');
    assert.deepEqual(callsOf('error', id), [], 'the runs resume');
  });

  it("a store that cannot keep it elsewhere: the value stays under the node's key, and a new schedule is played but not written over it", async () => {
    const bad = { v: 99, runs: [] };
    refusing.data.set(`${id}:tab`, { 'ems-schedule': bad });
    const { node, error } = await deploy('refusing');
    assert.match(
      error,
      /stored schedule\.v must be 1, .*; context key "ems-schedule" of store "refusing" holds a schedule that could not be read, nor kept under "ems-schedule-unread-\d+" \(disk full\); nothing is written over it$/,
    );
    await accept(node, [slotAt(0, -20)]);
    for (let i = 0; i < 500 && callsOf('warn', id).length === 0; i++) await new Promise((r) => realSetTimeout(r, 10));
    assert.match(
      String(callsOf('warn', id)[0][0]),
      /^schedule not saved: context key "ems-schedule" of store "refusing" holds a schedule that could not be read/,
    );
    assert.deepEqual(refusing.data.get(`${id}:tab`), { 'ems-schedule': bad }, 'untouched');
    // A redeploy hands the new schedule to the next node, which plays it and still writes nothing over the value.
    const warned = callsOf('warn', id).length;
    await helper.setFlows(
      flow(scheduleNode({ id, store: 'refusing' }), cfg(sim.url), { id: 'reports', type: 'helper', wires: [] }),
      'full',
    );
    for (let i = 0; i < 500 && callsOf('warn', id).length === warned; i++)
      await new Promise((r) => realSetTimeout(r, 10));
    assert.match(
      String(callsOf('warn', id)[warned][0]),
      /^schedule not saved: context key "ems-schedule" of store "refusing" holds/,
    );
    assert.match(String(callsOf('status', id).at(-1)?.[0]?.text), /^waiting: slot 1\/1/, 'the schedule plays');
    assert.deepEqual(refusing.data.get(`${id}:tab`), { 'ems-schedule': bad }, 'untouched after a redeploy');
  });
});
