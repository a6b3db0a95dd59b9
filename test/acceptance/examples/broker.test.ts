/**
 * `npm start` runs an MQTT broker for examples 03-05 and 10: example 03 imported into npm start's
 * Node-RED through the admin API (as shipped, only its broker node's port set to the one npm
 * start printed) round-trips its Home Assistant discovery configs and states through that
 * broker, read back by an MQTT client. Also: a port in use moves the broker to the next free
 * one, and npm start says so and what to change in the examples.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { readExample } from '../../helpers/examples';
import { closed, start, type Spawned } from '../../helpers/spawned';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'start-demo.js');
const EX03 = '03 Publish to MQTT with Home Assistant discovery.json';
const BAT = DEFAULT_SITES[1].battery.deviceReference;
/** The MQTT client Node-RED's own MQTT nodes use (a dependency of node-red, not of this package). */
const mqtt = require(
  require.resolve('mqtt', { paths: [path.dirname(require.resolve('node-red/package.json', { paths: [ROOT] }))] }),
);

interface Received {
  topic: string;
  payload: string;
  retain: boolean;
}

/** An MQTT client on 127.0.0.1:port that records every message of `topics`. */
async function subscriber(
  port: number,
  topics: string[],
): Promise<{
  got: Received[];
  wait(test: (m: Received) => boolean, n: number, ms?: number): Promise<Received[]>;
  end(): Promise<void>;
}> {
  const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, connectTimeout: 5000 });
  const got: Received[] = [];
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  await client.subscribeAsync(topics);
  client.on('message', (topic: string, payload: Buffer, packet: any) =>
    got.push({ topic, payload: payload.toString(), retain: !!packet.retain }),
  );
  return {
    got,
    async wait(test, n, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (got.filter(test).length < n) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${n} MQTT messages; got ${JSON.stringify(got)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return got.filter(test);
    },
    end: () => client.endAsync(),
  };
}

function startDemo(userDir: string, mqttPort: string): Spawned {
  fs.rmSync(userDir, { recursive: true, force: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    EMS_DEMO_USERDIR: userDir,
    EMS_MQTT_PORT: mqttPort,
  };
  delete env.NODE_RED_PATH;
  delete env.EMS_SIM_PORT;
  return start(process.execPath, [SCRIPT], { cwd: ROOT, env });
}

describe('npm start: the MQTT broker for examples 03-05 and 10', function () {
  this.timeout(60_000);
  const userDir = path.join(ROOT, '.test-tmp', `demo-broker-${process.pid}`);
  let demo: Spawned;
  let base = '';
  let port = 0;

  before(async () => {
    demo = startDemo(userDir, '0');
    base = (await demo.waitFor(/Editor: +(http:\/\/127\.0\.0\.1:\d+)\//, 45_000))[1];
    port = Number((await demo.waitFor(/MQTT broker: mqtt:\/\/127\.0\.0\.1:(\d+) /, 10_000))[1]);
    await demo.waitFor(/Press Ctrl-C to stop\./, 10_000);
  });

  after(async () => {
    await demo?.stop('SIGTERM');
    fs.rmSync(userDir, { recursive: true, force: true });
  });

  it('prints the broker URL, and how to point examples 03-05 and 10 at it when it is not on 1883', () => {
    assert.ok(port > 0 && port !== 1883, `port ${port}`);
    const out = demo.output();
    assert.match(out, new RegExp(`start-demo: MQTT broker listening on mqtt://127\\.0\\.0\\.1:${port}\\n`));
    assert.match(
      out,
      new RegExp(`\\n  MQTT broker: mqtt://127\\.0\\.0\\.1:${port} \\(for examples 03-05 and 10\\)\\n`),
    );
    assert.match(
      out,
      new RegExp(
        `Examples 03-05 and 10 connect to localhost:1883: set Port to ${port} in their MQTT broker config node`,
      ),
    );
  });

  it('example 03, imported through the admin API, round-trips discovery configs and states through that broker', async () => {
    const sub = await subscriber(port, ['homeassistant/#', 'ems/#']);
    try {
      // As shipped (host localhost, the built-in simulator), only the broker's port changed.
      const shipped = readExample(EX03);
      const nodes = shipped.map((n) => (n.type === 'mqtt-broker' ? { ...n, port: String(port) } : n));
      const isConfig = (n: any) => n.type === 'ems-partner-config' || n.type === 'mqtt-broker';
      const res = await fetch(`${base}/flow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          label: 'example 03',
          nodes: nodes.filter((n) => n.type !== 'tab' && !isConfig(n)),
          configs: nodes.filter(isConfig),
        }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.match((await res.json()).id, /^[0-9a-f]+$/);

      // The broker node's birth message announces as it connects, the battery is read 4 s after the deploy.
      const configs = await sub.wait((m) => m.topic.startsWith('homeassistant/'), 4);
      const states = await sub.wait((m) => m.topic.startsWith(`ems/${BAT}/`), 4);
      const byProp = new Map<string, any>();
      for (const c of configs.slice(0, 4)) {
        const body = JSON.parse(c.payload);
        const prop = body.state_topic.split('/').pop();
        byProp.set(prop, body);
        assert.equal(c.topic, `homeassistant/sensor/ems_${BAT}_${prop}/config`);
        assert.equal(body.unique_id, `ems_${BAT}_${prop}`);
        assert.equal(body.device.name, 'Home battery');
      }
      assert.deepEqual([...byProp.keys()].sort(), ['power', 'soc', 'totalEnergyConsumed', 'totalEnergyProduced']);
      assert.deepEqual([...byProp.values()].map((b) => b.unit_of_measurement).sort(), ['%', 'W', 'Wh', 'Wh']);
      for (const s of states.slice(0, 4)) {
        const prop = s.topic.split('/').pop()!;
        assert.equal(s.topic, byProp.get(prop)?.state_topic, `${s.topic} is the state topic of a discovered sensor`);
        assert.ok(Number.isFinite(Number(s.payload)) && s.payload.trim() !== '', `${s.topic}: ${s.payload}`);
      }
      const soc = Number(states.find((s) => s.topic.endsWith('/soc'))!.payload);
      assert.ok(soc >= 0 && soc <= 100, `soc ${soc}`);

      // Retained: a client that subscribes later (Home Assistant after a restart) gets them all.
      const late = await subscriber(port, ['homeassistant/sensor/#', `ems/${BAT}/#`]);
      try {
        const kept = await late.wait((m) => m.retain, 8);
        assert.deepEqual(new Set(kept.map((m) => m.topic)), new Set([...configs, ...states].map((m) => m.topic)));
      } finally {
        await late.end();
      }
    } finally {
      await sub.end();
    }
  });

  it('SIGTERM stops Node-RED and the broker', async () => {
    const exit = await demo.stop('SIGTERM');
    assert.equal(exit.code, 0);
    assert.match(demo.output(), /start-demo: stopped Node-RED and the MQTT broker/);
    assert.ok(await closed(port), 'broker port closed');
    assert.ok(await closed(Number(new URL(base).port)), 'Node-RED port closed');
  });
});

describe("npm start: the MQTT broker's port", function () {
  this.timeout(60_000);
  const userDir = path.join(ROOT, '.test-tmp', `demo-broker-port-${process.pid}`);
  let taken: net.Server;
  let demo: Spawned | undefined;

  before(async () => {
    taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await demo?.stop('SIGTERM');
    await new Promise((resolve) => taken.close(resolve));
    fs.rmSync(userDir, { recursive: true, force: true });
  });

  it('when the port asked for is in use, takes the next free one and says so', async () => {
    const wanted = (taken.address() as net.AddressInfo).port;
    demo = startDemo(userDir, String(wanted));
    const match = await demo.waitFor(
      /MQTT broker listening on mqtt:\/\/127\.0\.0\.1:(\d+) \(port (\d+) is in use\)/,
      20_000,
    );
    const got = Number(match[1]);
    assert.equal(Number(match[2]), wanted);
    assert.notEqual(got, wanted);
    await demo.waitFor(
      new RegExp(
        `MQTT broker: mqtt://127\\.0\\.0\\.1:${got} \\(for examples 03-05 and 10\\)\\n  Examples 03-05 and 10 connect to localhost:1883: set Port to ${got} `,
      ),
      45_000,
    );
    const sub = await subscriber(got, ['#']);
    await sub.end();
  });

  it('refuses an EMS_MQTT_PORT that is not a port number, before starting anything', async () => {
    const bad = startDemo(userDir, 'mqtt');
    const exit = await bad.exited;
    assert.equal(exit.code, 1);
    assert.match(bad.output(), /EMS_MQTT_PORT must be a port number \(0 = any free port\); got "mqtt"/);
    assert.doesNotMatch(bad.output(), /Node-RED/);
  });
});
