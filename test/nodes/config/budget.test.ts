/**
 * The request budget in Node-RED: `ems-request` in mode `stats` outputs the config
 * node's counts and caps (no secret in them); every flow node on the config node shows a
 * warning at 80 % of a cap, in the runtime's texts; a request at a cap ends in one Catch-able
 * error naming the cap; counts survive a redeploy of the flow and are forgotten when the config
 * node is removed.
 */
import assert from 'node:assert/strict';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { budgets } from '../../../src/runtime/budget-registry';
import { english } from '../../../src/nodes/shared/status';
import { formsOf } from '../../helpers/hostile-server';
import { StatusLog, flow, helper, loadFlow, useRuntime, useSimulator } from '../../helpers/red';

const BAT = DEFAULT_SITES[0].battery.deviceReference;
const KEY = 'k-SECRET/+=?&budget-42';
const read = { type: 'ems-request', method: 'GET', path: `/devices/${BAT}/measurement?property=soc` };
const stats = { type: 'ems-request', mode: 'stats' };
let ids = 0;
/** A config node of its own id per test (budgets are kept by id for the whole process). */
function config(url: string, extra: Record<string, unknown> = {}) {
  const id = `cfg-budget-nodes-${process.pid}-${++ids}`;
  return { id, type: 'ems-partner-config', baseUrl: url, simulator: false, authType: 'header', retries: 0, ...extra };
}
/** The key of a config node, as Node-RED stores credentials. */
const creds = (c: { id: string }) => ({ [c.id]: { apiKey: KEY } });

describe('request budget in Node-RED', function () {
  this.timeout(20_000);
  const sim = useSimulator({ apiKey: KEY });
  useRuntime();

  it('mode stats: any input gives the counts per last minute, hour and day and the caps; nothing is sent; no secret', async () => {
    const configNode = config(sim.s.url, { maxPerMinute: 100, maxPerDay: 5000, budgetMode: 'queue' });
    const loaded = await loadFlow(
      flow({ ...read, server: configNode.id }, configNode, {
        id: 's',
        type: 'ems-request',
        mode: 'stats',
        server: configNode.id,
        wires: [['out']],
      }),
      creds(configNode),
    );
    await loaded.ask();
    await loaded.ask();
    const before = sim.s.sim.requestLog.length;
    helper.getNode('s').receive({ topic: 'dash' });
    const message = await loaded.out.next();
    assert.equal(sim.s.sim.requestLog.length, before, 'stats sends nothing');
    assert.equal(message.topic, 'dash', 'the message is passed on');
    const payload = message.payload;
    assert.deepEqual(payload.caps, { maxPerMinute: 100, maxPerDay: 5000, budgetMode: 'queue' });
    for (const w of ['lastMinute', 'lastHour', 'lastDay', 'total'])
      assert.deepEqual(payload[w], { sent: 2, retried: 0, rateLimited: 0, failed: 0, refused: 0 }, w);
    assert.deepEqual(payload.usage, { maxPerMinute: 2, maxPerDay: 0 });
    assert.equal(payload.warning, null);
    assert.equal(payload.queued, 0);
    assert.ok(!Number.isNaN(Date.parse(payload.since)) && !Number.isNaN(Date.parse(payload.at)));
    const text = JSON.stringify(message);
    for (const form of formsOf(KEY)) assert.ok(!text.includes(form), `no form of the key (${form})`);
    const st = new StatusLog(helper.getNode('s'));
    helper.getNode('s').receive({});
    await loaded.out.next();
    assert.match(st.all.at(-1).text, /^sent 2\/min · 2\/24 h · \d\d:\d\d$/);
  });

  it('a bad mode is refused at deploy and per message, naming mode', async () => {
    const configNode = config(sim.s.url);
    const loaded = await loadFlow(
      flow({ type: 'ems-request', mode: 'count', server: configNode.id }, configNode),
      creds(configNode),
    );
    const error = await loaded.fails({});
    assert.match(error.error.message, /^ValidationError: mode must be "request".*"stats".*got "count"/);
  });

  it('at 80 % of a cap every node on the config node warns (yellow ring, the catalog text); at the cap a read ends in a Catch-able error', async () => {
    const configNode = config(sim.s.url, { maxPerMinute: 5 });
    const loaded = await loadFlow(
      flow({ ...read, server: configNode.id }, configNode, { id: 'other', ...stats, server: configNode.id, wires: [] }),
      creds(configNode),
    );
    const other = new StatusLog(helper.getNode('other'));
    for (let i = 0; i < 3; i++) await loaded.ask();
    assert.ok(!other.all.some((s) => s.fill === 'yellow'), 'no warning below 80 %');
    const warned = other.wait((s) => s.fill === 'yellow');
    await loaded.ask();
    const warning = await warned;
    const text = english('ems-partner-config')('budget', { percent: 80, cap: 'maxPerMinute' });
    assert.equal(text, 'budget 80 % of maxPerMinute');
    assert.deepEqual(warning, { fill: 'yellow', shape: 'ring', text });
    const mine = loaded.status.all.at(-1);
    assert.equal(mine.fill, 'yellow');
    assert.match(
      mine.text,
      /^GET 200 · \d\d:\d\d · budget 80 % of maxPerMinute$/,
      "the node's own result carries the warning",
    );
    await loaded.ask();
    const error = await loaded.fails();
    assert.match(
      error.error.message,
      /^BudgetError: GET \/devices\/\w+\/measurement not sent: request budget maxPerMinute reached \(5 of 5 requests in the last 60 s\); frees at \S+ \(budgetMode "refuse"\)$/,
    );
    assert.equal(error.error.code, 'EMS_BUDGET');
    assert.equal(loaded.status.all.at(-1).fill, 'red');
    assert.equal(loaded.status.all.at(-1).text, 'budget: maxPerMinute reached · 1 refused');
  });

  it('queue mode: of a burst, the messages the budget cannot send within 10 minutes fail at once (Catch-able, red ring, counted as refused); the rest wait in order', async () => {
    // 2 a minute and 3 a day: two go now, the third in 61 s; seven more can never go within 10 minutes.
    const configNode = config(sim.s.url, { maxPerMinute: 2, maxPerDay: 3, budgetMode: 'queue', concurrency: 1 });
    const loaded = await loadFlow(flow({ ...read, server: configNode.id }, configNode), creds(configNode));
    for (let i = 0; i < 10; i++) loaded.send({ path: `/devices/${BAT}/measurement?property=soc&n=${i}` });
    const errors = await loaded.caught.count(7);
    await loaded.out.count(2);
    for (const e of errors) {
      assert.equal(e.error.code, 'EMS_BUDGET');
      assert.match(
        e.error.message,
        /^BudgetError: GET \/devices\/\w+\/measurement not sent: request budget maxPerDay reached \(\d of 3 requests in the last 24 h and \d waiting ahead of it\); its turn would come at \S+, later than budgetMode "queue" waits \(10 minutes\)$/,
      );
    }
    assert.ok(
      loaded.status.all.some((x) => x.fill === 'red' && x.text === 'budget: maxPerDay reached · 7 refused'),
      'a red ring names the cap and counts the refusals',
    );
    const st = budgets.peek(configNode.id)!.stats();
    assert.deepEqual(
      { sent: st.total.sent, refused: st.total.refused, queued: st.queued },
      { sent: 2, refused: 7, queued: 1 },
    );
  });

  it('counts survive a redeploy (caps read again) and are forgotten when the config node is removed', async () => {
    const configNode = config(sim.s.url, { maxPerMinute: 1000 });
    let loaded = await loadFlow(
      flow({ ...read, server: configNode.id }, configNode, {
        id: 's',
        ...stats,
        server: configNode.id,
        wires: [['out']],
      }),
      creds(configNode),
    );
    await loaded.ask();
    await loaded.ask();
    loaded = await loadFlow(
      flow(
        { ...read, server: configNode.id },
        { ...configNode, maxPerMinute: 500 },
        { id: 's', ...stats, server: configNode.id, wires: [['out']] },
      ),
      creds(configNode),
    );
    helper.getNode('s').receive({});
    const message = await loaded.out.next();
    assert.equal(message.payload.total.sent, 2);
    assert.equal(message.payload.caps.maxPerMinute, 500);
    assert.ok(budgets.peek(configNode.id));
    await new Promise<void>((resolve) => {
      helper
        .getNode(configNode.id)
        .close(true)
        .then(() => resolve());
    });
    assert.equal(budgets.peek(configNode.id), undefined, 'removed: forgotten');
  });
});
