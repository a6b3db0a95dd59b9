/**
 * Restarts lose nothing: an `ems-schedule` node keeps its schedule and what it sent
 * in its context store. Node-RED runs with two context stores (settings contextStorage): the
 * default `memory` and `file`, a localfilesystem store in a temporary directory. A restart is
 * Node-RED's own sequence: the flows stop (nodes close), the stores close; then a new runtime
 * (a new node API, the stores loaded again from disk) starts the same flows. Time is
 * @sinonjs/fake-timers (Date, setTimeout, clearTimeout); the simulator's clock follows it, and
 * its request log shows what arrived when. Nothing sleeps.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import FakeTimers from '@sinonjs/fake-timers';
import { packageTimers, nextPackageTimer } from '../../helpers/clock';
import { MINUTE_MS, QUARTER_HOUR_MS, formatClock } from '../../../src/protocol/time';
import { startSimulator, type StartedSimulator } from '../../../src/simulator';
import { NODES, callsOf, cfg, flow, helper, Inbox, turns, useRuntime } from '../../helpers/red';
import { scheduleNode } from '../../helpers/schedule';

const T0 = Math.ceil((Date.now() + 2 * 3_600_000) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
const slotAt = (i: number, v: number) => ({
  start: T0 + i * QUARTER_HOUR_MS,
  end: T0 + (i + 1) * QUARTER_HOUR_MS,
  energyStorage: v,
});
const steerRoute = /^POST \/sites\/:ref\/steering/;
/** The real setTimeout, for waiting on the file store's writes while the fake clock is installed. */
const realSetTimeout = setTimeout;

describe('ems-schedule: restarts with a file context store', () => {
  let dir: string;
  let clock: ReturnType<typeof FakeTimers.install>;
  let sim: StartedSimulator;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ems-schedule-ctx-'));
    helper.settings({
      contextStorage: {
        default: { module: 'memory' },
        file: { module: 'localfilesystem', config: { dir, cache: false } },
      },
    });
  });
  after(() => {
    helper.settings({});
    fs.rmSync(dir, { recursive: true, force: true });
  });
  useRuntime();
  beforeEach(async () => {
    fs.rmSync(path.join(dir, 'context'), { recursive: true, force: true });
    clock = FakeTimers.install({ now: T0 - 2 * MINUTE_MS, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    sim = await startSimulator({ port: 0 });
  });
  afterEach(async () => {
    clock.uninstall();
    await sim.close();
  });

  const log = () => sim.sim.requestLog.filter((e) => steerRoute.test(e.route));
  const nodes = (store: string) =>
    flow(scheduleNode({ store }), cfg(sim.url), { id: 'reports', type: 'helper', wires: [] });

  /** Starts Node-RED: a new node API, the context stores loaded from disk, then the flows. */
  async function start(flows: object[]): Promise<{ node: any; out: Inbox }> {
    await helper.load(NODES, [{ id: 'tab', type: 'tab', label: 'test' }]);
    await helper._context.load();
    await helper.setFlows(flows, 'full');
    return { node: helper.getNode('n'), out: new Inbox(helper.getNode('out')) };
  }
  /** Stops Node-RED: the flows stop (each node closes), the stores close; nothing of this process is kept. */
  async function stop(): Promise<void> {
    await helper._redNodes.stopFlows();
    await helper._context.close();
    helper._context.init(helper._settings); // the memory store of the next process is empty
    await helper.unload();
  }
  /** Statuses node `n` showed from index `from` on (in this runtime: a restart starts the record anew). */
  const texts = (from = 0) =>
    callsOf('status', 'n')
      .slice(from)
      .map((a) => a[0]?.text);
  async function shown(re: RegExp, from: number): Promise<string> {
    for (let i = 0; i < 10_000; i++) {
      const hit = texts(from).find((t) => re.test(t ?? ''));
      if (hit) return hit;
      await new Promise((r) => setImmediate(r));
    }
    assert.fail(`no status ${re}; saw ${JSON.stringify(texts(from))}`);
  }
  /** The node's saved state in the store's file, once it passes `test` (the store writes in the background; real time, bounded). */
  async function stored(file: string, test: (v: any) => boolean): Promise<any> {
    let content: any;
    for (let i = 0; i < 500; i++) {
      try {
        content = JSON.parse(fs.readFileSync(file, 'utf8'))['ems-schedule'];
        if (test(content)) return content;
      } catch {
        /* not written yet */
      }
      await new Promise((r) => realSetTimeout(r, 10));
    }
    assert.fail(`the file store holds ${JSON.stringify(content)}`);
  }
  /** Sends a schedule to node `n` and waits until it took it. */
  async function accept(node: any, payload: unknown): Promise<void> {
    const from = callsOf('status', 'n').length;
    node.receive({ payload });
    await shown(/^waiting: /, from);
  }
  /** Fires the node's one timer and waits for the request it sends. */
  async function step(out: Inbox): Promise<void> {
    assert.equal(packageTimers(clock), 1, 'one timer');
    const before = out.msgs.length;
    await nextPackageTimer(clock);
    await out.count(before + 1);
    await turns();
  }

  it('resumes at the slot in progress and sends nothing twice: within a slot, and across a slot boundary', async () => {
    let rt = await start(nodes('file'));
    await accept(rt.node, [slotAt(0, -200), slotAt(1, -100), slotAt(2, 0), slotAt(3, 50)]);
    await step(rt.out); // slot 0 at T0
    assert.deepEqual(
      log().map((e) => e.time),
      [T0],
    );
    const file = path.join(dir, 'context', 'tab', 'n.json');
    assert.equal(
      (await stored(file, (v) => v?.runs?.length === 3)).inForce.first,
      0,
      'the schedule and what was sent are in the file store',
    );

    // Restart 1, within slot 0: nothing is sent, the next slot goes out at its start.
    clock.tick(5 * MINUTE_MS);
    await stop();
    clock.tick(2 * MINUTE_MS);
    rt = await start(nodes('file'));
    let from = 0;
    assert.equal(
      await shown(/^(slot|waiting)/, from),
      `slot 1/4 · ESS −200 kW until ${formatClock(T0 + QUARTER_HOUR_MS)}`,
    );
    await turns();
    assert.equal(log().length, 1, 'nothing sent twice');
    await step(rt.out); // slot 1 at T0 + 15 min
    assert.deepEqual(
      log().map((e) => e.time),
      [T0, T0 + QUARTER_HOUR_MS],
    );

    // Restart 2, down from T0 + 20 min to T0 + 35 min: slot 2 began meanwhile and goes out at once.
    clock.tick(5 * MINUTE_MS);
    await stop();
    clock.tick(15 * MINUTE_MS);
    rt = await start(nodes('file'));
    from = 0;
    await rt.out.count(1);
    assert.equal(await shown(/^slot 3\/4/, from), `slot 3/4 · ESS 0 kW until ${formatClock(T0 + 3 * QUARTER_HOUR_MS)}`);
    assert.deepEqual(
      log().map((e) => [e.time, (e.body as any).setting.value, (e.body as any).validUntil]),
      [
        [T0, -200, T0 + QUARTER_HOUR_MS],
        [T0 + QUARTER_HOUR_MS, -100, T0 + 2 * QUARTER_HOUR_MS],
        [T0 + 35 * MINUTE_MS, 0, T0 + 3 * QUARTER_HOUR_MS],
      ],
    );
    await step(rt.out); // slot 3
    assert.equal(log().length, 4);
    // Done: the saved schedule is gone.
    await nextPackageTimer(clock);
    await turns();
    assert.equal(texts().at(-1), 'done');
    assert.equal(await stored(file, (v) => v === undefined), undefined, 'the saved schedule is gone');
  });

  it('the memory store keeps nothing over a restart (the help says to use a file-backed store)', async () => {
    const rt = await start(nodes(''));
    await accept(rt.node, [slotAt(0, -200), slotAt(1, -100)]);
    await step(rt.out);
    await stop();
    await start(nodes(''));
    const from = 0;
    await turns(20);
    assert.deepEqual(
      texts(from).filter((t) => t),
      [],
    );
    assert.equal(packageTimers(clock), 0, 'nothing to play');
    assert.equal(log().length, 1);
  });

  it("a stored schedule beyond the node's current limits is not resumed: an error says why, nothing is sent", async () => {
    const rt = await start(nodes('file'));
    await accept(rt.node, [slotAt(0, -100), slotAt(1, -200)]);
    await step(rt.out);
    await stored(path.join(dir, 'context', 'tab', 'n.json'), (v) => v?.inForce !== undefined);
    await stop();
    const [from, errors] = [0, 0];
    await start(flow(scheduleNode({ store: 'file', maxEssPower: 150_000 }), cfg(sim.url)));
    await shown(/^bad stored schedule/, from);
    const [err] = callsOf('error', 'n').slice(errors);
    assert.match(
      String(err[0].message),
      /^stored schedule not resumed: stored schedule\.runs\[0\]\.setting\.energyStorage must be within the node's limit maxEssPower = 150000 W/,
    );
    assert.equal(packageTimers(clock), 0);
    assert.equal(log().length, 1);
  });
});
