/**
 * `npm start` (scripts/start-demo.js) from a fresh user directory: it prints the URLs (editor,
 * dashboard, the built-in simulator and the MQTT broker of examples 03-05), serves
 * the demo flow and the dashboard, both sites are polled, the chart gets 7 days, the steering
 * controls change the simulated site, Stop hands it back, the dashboard shows the steering in
 * force on the site (also what another flow sent), and SIGINT stops everything.
 * The dashboard is driven as a browser drives it (socket.io events of its widgets).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { DashboardClient } from '../../helpers/dashboard-client';
import { closed, freePort, start, type Spawned } from '../../helpers/spawned';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const DEMO = JSON.parse(fs.readFileSync(path.join(ROOT, 'demo', 'flow.json'), 'utf8')) as any[];
const COM = DEFAULT_SITES[0];
const byLabel = (type: string, re: RegExp) => {
  const found = DEMO.filter((n) => n.type === type && re.test(n.label ?? n.title ?? n.name));
  assert.equal(found.length, 1, `one ${type} matching ${re}`);
  return found[0].id as string;
};
/** A widget of a site's group, by label. */
const widgetOf = (group: RegExp, type: string, label: RegExp) => {
  const groupId = DEMO.find((n) => n.type === 'ui-group' && group.test(n.name)).id;
  const found = DEMO.filter((n) => n.group === groupId && n.type === type && label.test(n.label ?? n.title));
  assert.equal(found.length, 1);
  return found[0].id as string;
};

describe('npm start: the demo', function () {
  this.timeout(60_000);
  const userDir = path.join(ROOT, '.test-tmp', `demo-test-${process.pid}`);
  let demo: Spawned;
  let base = '';
  let simUrl = '';
  let client: DashboardClient;
  const sim = async (p: string) => (await fetch(simUrl + p)).json();
  /** Waits until the dashboard's "In force on the site" text matches, in a message that arrives from now on. */
  const inForce = (re: RegExp) => {
    const id = byLabel('ui-text', /^In force on the site$/);
    const before = new Set(
      (client as any).events.filter((x: any) => x[0] === `msg-input:${id}`).map((x: any) => x[1]._msgid),
    );
    return client
      .waitFor(`msg-input:${id}`, (m) => !before.has(m._msgid) && re.test(m.payload), 30_000)
      .catch((e) => {
        throw new Error(
          `${e.message}; said ${JSON.stringify((client as any).events.filter((x: any) => x[0] === `msg-input:${id}`).slice(-3))}`,
        );
      });
  };

  before(async () => {
    fs.rmSync(userDir, { recursive: true, force: true });
    const simPort = await freePort();
    simUrl = `http://127.0.0.1:${simPort}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      EMS_DEMO_USERDIR: userDir,
      EMS_SIM_PORT: String(simPort),
      EMS_MQTT_PORT: '0',
    };
    delete env.NODE_RED_PATH;
    demo = start(process.execPath, [path.join(ROOT, 'scripts', 'start-demo.js')], { cwd: ROOT, env });
    const match = await demo.waitFor(/Dashboard: (http:\/\/127\.0\.0\.1:\d+)\/dashboard\n/, 45_000);
    base = match[1];
    client = new DashboardClient(base);
    await client.connect();
  });

  after(async () => {
    await client?.close();
    await demo?.stop('SIGTERM');
    fs.rmSync(userDir, { recursive: true, force: true });
  });

  it('prints the editor, dashboard, simulator and MQTT broker URLs and installs the demo flow in its own user directory', () => {
    assert.match(
      demo.output(),
      new RegExp(
        `EMS partner demo ready in \\d+\\.\\d s .*\\n  Editor:    ${base}/\\n  Dashboard: ${base}/dashboard\\n` +
          `  Simulator: ${simUrl}\\n  MQTT broker: mqtt://127\\.0\\.0\\.1:\\d+ \\(for examples 03-05 and 10\\)\\n`,
      ),
    );
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(userDir, 'flows.json'), 'utf8')), DEMO);
    assert.match(demo.output(), new RegExp(`User directory : ${userDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
  });

  it('serves the deployed demo flow and the dashboard page', async () => {
    const flows = (await (await fetch(`${base}/flows`, { headers: { 'Node-RED-API-Version': 'v1' } })).json()) as any[];
    assert.deepEqual(flows.map((n) => n.id).sort(), DEMO.map((n) => n.id).sort());
    const page = await fetch(`${base}/dashboard/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await page.text(), /<div id="app"/);
  });

  it('polls SOC, power flows and energy counters of both sites', async () => {
    for (const site of [/^Commercial/, /^Home/]) {
      const [soc] = await client.waitFor(
        `msg-input:${widgetOf(site, 'ui-gauge', /SOC/)}`,
        (m) => typeof m.payload === 'number',
        15_000,
      );
      assert.ok(soc.payload >= 0 && soc.payload <= 100);
      for (const [label, re] of [
        [/^Battery$/, /^-?[\d,.]+ kW \((charging|discharging|idle)\)$/],
        [/^PV$/, /^[\d,.]+ kW · total [\d,.]+ (k|M)Wh$/],
        [/^Grid$/, /^[\d,.]+ kW (import|export|)$/],
        [/^Battery energy$/, /^in [\d,.]+ (k|M)Wh · out/],
        [/^Grid energy$/, /^import [\d,.]+ (k|M)Wh · export/],
      ] as const) {
        await client.waitFor(`msg-input:${widgetOf(site, 'ui-text', label)}`, (m) => re.test(m.payload), 15_000);
      }
    }
  });

  it('charts the last 7 days of the series picked in the dropdown', async () => {
    const chart = byLabel('ui-chart', /7 days/);
    await client.emit('widget-change', byLabel('ui-dropdown', /Series/), 'dvc_WTUv8brR7DnH/soc');
    const [msg] = await client.waitFor(`msg-input:${chart}`, (m) => m.topic === 'Home battery soc', 15_000);
    assert.ok(msg.payload.length >= 7 * 24 && msg.payload.length <= 7 * 24 + 2, `${msg.payload.length} points`);
    assert.deepEqual(Object.keys(msg.payload[0]), ['x', 'y']);
  });

  it('the steering controls change the simulated site within seconds; Stop hands it back', async () => {
    const last = byLabel('ui-text', /^Last message$/);
    const said = (re: RegExp) =>
      client
        .waitFor(`msg-input:${last}`, (m) => re.test(m.payload), 15_000)
        .catch((e) => {
          throw new Error(
            `${e.message}; said ${JSON.stringify((client as any).events.filter((x: any) => x[0] === `msg-input:${last}`))}; output ${demo.output().slice(-2000)}`,
          );
        });
    const steering = async () => (await sim(`/sites/${COM.siteReference}/steering`)).components;
    await inForce(/^nothing: the site runs on the EMS's own control$/);

    await client.emit('widget-change', byLabel('ui-slider', /^Battery kW/), -200);
    await said(/^ESS -200 kW until /);
    assert.deepEqual(
      [(await steering()).energyStorageSetting.value, (await steering()).energyStorageSetting.unit],
      [-200, 'kW'],
    );
    assert.equal((await sim(`/sites/${COM.siteReference}/state`)).batteryW, -200_000);
    await client.waitFor(
      `msg-input:${widgetOf(/^Commercial/, 'ui-text', /^Battery$/)}`,
      (m) => m.payload === '-200 kW (charging)',
      15_000,
    );
    await inForce(/^ESS -200 kW until \d\d:\d\d$/);

    await client.emit('widget-change', byLabel('ui-slider', /^PV limit %/), 40);
    await said(/^PV limit 40 % until /);
    assert.deepEqual(
      [(await steering()).productionCurtailment.value, (await steering()).productionCurtailment.unit],
      [40, '%'],
    );

    await client.emit('widget-change', byLabel('ui-switch', /Maximize grid import/), true);
    await said(/^max import on until /);
    assert.equal((await steering()).maximizeGridImport.value, true);

    const t0 = Date.now();
    await client.emit('widget-action', byLabel('ui-button', /Stop/), { payload: 'stop' });
    await said(/^ESS 0 kW, PV limit 100 %, max import off until /);
    const components = await steering();
    assert.deepEqual(
      [
        components.energyStorageSetting.value,
        components.productionCurtailment.value,
        components.maximizeGridImport.value,
      ],
      [0, 100, false],
    );
    assert.ok(
      components.energyStorageSetting.validUntil <= Date.now() + 5_000 &&
        components.energyStorageSetting.validUntil >= t0 + 5_000,
      'neutral for 5 s only',
    );
  });

  it('"In force on the site" shows the steering the site has, also what another flow sent: grid limits next to the slider\'s ESS setting', async function () {
    this.timeout(120_000); // five reads of the steering state, 5 s apart
    // Stop's neutral components (5 s) have lapsed: nothing in force; then the slider's ESS setting.
    await inForce(/^nothing: the site runs on the EMS's own control$/);
    await client.emit('widget-change', byLabel('ui-slider', /^Battery kW/), -200);
    await inForce(/^ESS -200 kW until \d\d:\d\d$/);
    // Another flow (example 08's button) sends grid limits: export at least 100 kW, for 5 minutes.
    const response = await fetch(`${simUrl}/sites/${COM.siteReference}/steering/grid-limits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ upperLimit: { value: -100, unit: 'kW' }, validUntil: Date.now() + 5 * 60_000 }),
    });
    assert.equal(response.status, 200, await response.text());
    // The slider still says -200 kW; the dashboard says what is in force on the site: both, and that the limits win.
    await inForce(
      /^ESS -200 kW until \d\d:\d\d · grid limits -800 kW … -100 kW \(\+ import, − export; they win over ESS\) until \d\d:\d\d$/,
    );
    const state = await sim(`/sites/${COM.siteReference}/state`);
    assert.ok(state.gridW <= -100_000 + 1, `the limits hold: grid ${state.gridW} W`);
    await client.emit('widget-action', byLabel('ui-button', /Stop/), { payload: 'stop' });
    await inForce(
      /^ESS 0 kW until \d\d:\d\d · PV limit 100 % until \d\d:\d\d · max import off until \d\d:\d\d · grid limits /,
    );
  });

  it('SIGINT (Ctrl-C) stops Node-RED, the built-in simulator and the MQTT broker', async () => {
    await client.close();
    const mqttPort = Number(/MQTT broker: mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(demo.output())![1]);
    assert.equal(await closed(mqttPort), false, 'the broker runs until then');
    const exit = await demo.stop('SIGINT');
    assert.equal(exit.code, 0);
    assert.match(demo.output(), /Stopped flows/);
    assert.ok(await closed(Number(new URL(base).port)), 'Node-RED port closed');
    assert.ok(await closed(Number(new URL(simUrl).port)), 'simulator port closed');
    assert.ok(await closed(mqttPort), 'MQTT broker port closed');
  });
});
