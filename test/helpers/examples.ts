/**
 * Loading the shipped example flows (examples/*.json) into the test runtime: exactly as
 * shipped, except that the EMS config node points at the test's simulator and the MQTT
 * broker config node at the test's in-process aedes broker. Nodes are found by name. The
 * steering examples steer sites of their own (simulator/sites.ts EXAMPLE_SITES): a test
 * simulator runs BUILT_IN_SITES, as the built-in one does.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BUILT_IN_SITES, type SiteDefinition } from '../../src/simulator/index';
import { coreNode } from './node-red-path';
import { helper, Inbox, NODES, StatusLog } from './red';

export const EXAMPLES_DIR = path.resolve(__dirname, '..', '..', 'examples');

/** The node types of this package. */
export const OURS = [
  'ems-partner-config',
  'ems-device-read',
  'ems-time-series',
  'ems-site-steer',
  'ems-schedule',
  'ems-plan',
  'ems-request',
];

/** Core node modules the examples use, from the runtime under test. */
export const CORE_NODES = [
  'common/20-inject.js',
  'common/21-debug.js',
  'common/25-catch.js',
  'common/25-status.js',
  'common/90-comment.js',
  'function/10-function.js',
  'function/15-change.js',
  'function/10-switch.js',
  'network/10-mqtt.js',
].map(coreNode);

export function exampleFiles(): string[] {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

export function readExample(file: string): any[] {
  return JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8'));
}

/** The example file whose name starts with `nn` (e.g. '04'). */
export function exampleFile(nn: string): string {
  const found = exampleFiles().filter((f) => f.startsWith(`${nn} `));
  if (found.length !== 1) throw new Error(`${found.length} examples numbered ${nn}`);
  return found[0];
}

/** A site of the built-in simulator by name, e.g. 'Home (example 04)' or 'Home'. */
export function builtInSite(name: string): SiteDefinition {
  const found = BUILT_IN_SITES.filter((s) => s.name === name);
  if (found.length !== 1) throw new Error(`${found.length} built-in sites named ${JSON.stringify(name)}`);
  return found[0];
}

/** The flow as the test runtime loads it: the EMS config node on `simUrl` (BUILT_IN: as shipped), the MQTT broker on 127.0.0.1:`mqttPort`. */
export function forTest(
  shipped: any[],
  simUrl: string,
  mqttPort?: number,
  broker: Record<string, unknown> = {},
): any[] {
  const nodes = shipped.map((n) => {
    if (n.type === 'ems-partner-config')
      return simUrl === BUILT_IN ? n : { ...n, simulator: false, baseUrl: simUrl, retries: 0 };
    if (n.type === 'mqtt-broker') return { ...n, broker: '127.0.0.1', port: String(mqttPort ?? 1), ...broker };
    return n;
  });
  // A file without its tab (none ships so): the tab every flow node sits on.
  const tabs = new Set(nodes.filter((n) => n.type === 'tab').map((n) => n.id));
  const missing = [...new Set(nodes.map((n) => n.z).filter((z) => z && !tabs.has(z)))];
  return [...missing.map((id) => ({ id, type: 'tab', label: id })), ...nodes];
}

/**
 * The examples that announce to Home Assistant (03, 04, 10) do so on deploy (an inject, 1 s on, real
 * time), on every connect of the broker node and when Home Assistant comes online: for a test that
 * counts messages, the flow without the first (the connect announces as the flow starts).
 */
export function withoutDeployAnnounce(nodes: any[]): any[] {
  return nodes.map((n) => (n.type === 'inject' && n.name === 'on deploy: announce' ? { ...n, once: false } : n));
}

/**
 * Several examples in one flow, as a user imports them one after another into one Node-RED: each
 * for the test (forTest), a node they share (the MQTT broker node) once.
 */
export function together(files: string[], simUrl: string, mqttPort?: number): any[] {
  const seen = new Set<string>();
  return files
    .flatMap((f) => forTest(readExample(f), simUrl, mqttPort))
    .filter((n) => !seen.has(n.id) && Boolean(seen.add(n.id)));
}

/** The runtime node named `name` in example `file` (names repeat across examples). */
export function nodeIn(file: string, name: string): any {
  const found = readExample(file).filter((n) => n.name === name);
  if (found.length !== 1) throw new Error(`${file}: ${found.length} nodes named ${JSON.stringify(name)}`);
  const node = helper.getNode(found[0].id);
  if (!node) throw new Error(`${file}: node ${JSON.stringify(name)} did not start`);
  return node;
}

/**
 * helper.load for flows with several Catch (Status, Complete) nodes: node-red-node-test-helper 0.3
 * runs its own module of those types once per such node of the flow, which would register the type
 * again; here each runs once per load, and is not passed again among `modules` (one the flow does
 * not use is loaded from `modules`, so a later deploy may add such nodes).
 */
export async function loadFlow(modules: unknown[], flow: object[]): Promise<void> {
  const testHelper = helper as any;
  const own: Record<string, (red: unknown) => unknown> = testHelper._nodeModules;
  const ran = new Set<unknown>();
  testHelper._nodeModules = Object.fromEntries(
    Object.entries(own).map(([type, mod]) => [
      type,
      (red: unknown) => {
        if (ran.has(mod)) return undefined;
        ran.add(mod);
        return mod(red);
      },
    ]),
  );
  try {
    const used = new Set(flow.map((n: any) => n.type));
    const run = Object.entries(own)
      .filter(([type]) => used.has(type))
      .map(([, mod]) => mod);
    await helper.load(
      [...new Set(modules)].filter((m) => !run.includes(m as any)),
      flow,
      {},
    );
  } finally {
    testHelper._nodeModules = own;
  }
}

export interface LoadedExample {
  nodes: any[];
  /** The runtime node of the flow node with this name (throws if none or several). */
  node(name: string): any;
  /** An inbox on the named node's input (e.g. a debug node). */
  inbox(name: string): Inbox;
  status(name: string): StatusLog;
  /** Sends a message into the named node (an inject fires as if pressed). */
  fire(name: string, msg?: Record<string, unknown>): void;
}

/** Pass as `simUrl` to keep the config node as shipped: the simulator built into the package. */
export const BUILT_IN = 'built-in';

/** Loads examples/<file>, EMS config on `simUrl`, MQTT broker on 127.0.0.1:`mqttPort`. */
export async function loadExample(
  file: string,
  simUrl: string,
  mqttPort?: number,
  edit: (shipped: any[]) => any[] = (x) => x,
): Promise<LoadedExample> {
  const shipped = edit(readExample(file));
  await loadFlow([...NODES, ...CORE_NODES], forTest(shipped, simUrl, mqttPort));
  return loaded(file, shipped);
}

/** The handles of an example's nodes once its flow is loaded: by the names they are shipped with. */
export function loaded(file: string, shipped: any[]): LoadedExample {
  const byName = (name: string) => {
    const found = shipped.filter((n) => n.name === name);
    if (found.length !== 1) throw new Error(`${file}: ${found.length} nodes named ${JSON.stringify(name)}`);
    const node = helper.getNode(found[0].id);
    if (!node)
      throw new Error(`${file}: node ${JSON.stringify(name)} did not start (${path.join(EXAMPLES_DIR, file)})`);
    return node;
  };
  return {
    nodes: shipped,
    node: byName,
    inbox: (name) => new Inbox(byName(name)),
    status: (name) => new StatusLog(byName(name)),
    fire: (name, msg = {}) => byName(name).receive(msg),
  };
}

export interface Published {
  topic: string;
  payload: string;
  retain: boolean;
}

/** An in-process MQTT broker on 127.0.0.1 that records what clients publish. */
export class TestBroker {
  broker: any;
  server!: net.Server;
  port = 0;
  readonly published: Published[] = [];
  private waiters: Array<() => void> = [];

  async start(): Promise<void> {
    const { Aedes } = await import('aedes');
    this.broker = await (Aedes as any).createBroker();
    this.broker.on('publish', (packet: any, client: any) => {
      if (!client) return; // the broker's own $SYS messages and test publishes
      this.published.push({ topic: packet.topic, payload: packet.payload.toString(), retain: !!packet.retain });
      for (const w of [...this.waiters]) w();
    });
    this.server = net.createServer(this.broker.handle);
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.broker.close(() => resolve()));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves once a client subscribed to `topic` (register before loading the flow). */
  subscribed(topic: string, ms = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no subscription to ${topic}`)), ms);
      const on = (subs: Array<{ topic: string }>) => {
        if (!subs.some((s) => s.topic === topic)) return;
        clearTimeout(timer);
        this.broker.off('subscribe', on);
        resolve();
      };
      this.broker.on('subscribe', on);
    });
  }

  /** Publishes as if from another client (Home Assistant, a price feed). */
  publish(topic: string, payload: string): Promise<void> {
    return new Promise((resolve, reject) =>
      this.broker.publish(
        { cmd: 'publish', topic, payload: Buffer.from(payload), qos: 0, retain: false, dup: false },
        (err?: Error) => (err ? reject(err) : resolve()),
      ),
    );
  }

  /** Resolves with the messages published on topics matching `test` once there are `n`. */
  async await(test: (p: Published) => boolean, n = 1, ms = 10_000): Promise<Published[]> {
    const found = () => this.published.filter(test);
    if (found().length >= n) return found();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(
          new Error(`timed out waiting for ${n} MQTT messages; got ${found().length}: ${JSON.stringify(found())}`),
        );
      }, ms);
      const check = () => {
        if (found().length < n) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve(found());
      };
      this.waiters.push(check);
    });
  }
}

/** A TestBroker for a describe block: started before it, stopped after it. */
export function useBroker(): TestBroker {
  const broker = new TestBroker();
  before(async () => {
    await broker.start();
  });
  after(async () => {
    await broker.stop();
  });
  return broker;
}
