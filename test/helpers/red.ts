/**
 * Shared pieces of the Node-RED runtime tests: the test helper with the four node modules
 * (loaded from src through tsx) and Node-RED's Catch node, a simulator per suite, flow
 * builders, and ways to await messages, errors and statuses without sleeping.
 */
import async_hooks from 'node:async_hooks';
import type { LogEntry, StartedSimulator } from '../../src/simulator/index';
import { coreNode, nodeRedPath } from './node-red-path';
import { migrate } from '../../src/nodes/shared/migrations';

export { useSimulator } from './sim';

export interface TestHelper {
  init(runtimePath: string, settings?: object): void;
  load(nodes: unknown[], flow: object[], credentials?: Record<string, object>): Promise<void>;
  unload(): Promise<void>;
  startServer(done: (err?: Error) => void): void;
  stopServer(done: (err?: Error) => void): void;
  getNode(id: string): any;
  request(): any;
  /** The spy on RED.log.log of the loaded flow. */
  log(): any;
  /** The helper's internals (the runtime's nodes module, spies, ...). */
  [key: string]: any;
}

export const helper: TestHelper = require('node-red-node-test-helper');
helper.init(nodeRedPath); // NODE_RED_PATH or the devDependency (see node-red-path.ts)

export const configNode = require('../../src/nodes/config');
export const readNode = require('../../src/nodes/device-read');
export const seriesNode = require('../../src/nodes/time-series');
export const steerNode = require('../../src/nodes/site-steer');
export const requestNode = require('../../src/nodes/request');
export const scheduleNode = require('../../src/nodes/schedule');
export const planNode = require('../../src/nodes/plan');
export const catchNode = coreNode('common/25-catch.js');
/** Every module a flow of these tests may use. */
export const NODES = [configNode, readNode, seriesNode, steerNode, requestNode, scheduleNode, planNode, catchNode];

/** Registers the helper's server hooks for a describe block (braces, as the guide asks). */
export function useRuntime(): void {
  beforeEach((done) => {
    helper.startServer(done);
  });
  afterEach((done) => {
    loaded = false;
    helper.unload().then(() => {
      helper.stopServer(done);
    }, done);
  });
}

/** A config node on a simulator URL (retries 0 so fault tests stay quick unless asked). */
export function cfg(baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'cfg', type: 'ems-partner-config', baseUrl, simulator: false, authType: 'none', retries: 0, ...extra };
}

/**
 * A site-steer node as the editor saves it with its defaults (mode ess, kW), on `site`: the
 * current version, every property the migrations add at its default, the power limits empty
 * (the site's rating: limits are on by default).
 */
export function siteSteer(site: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const saved = {
    type: 'ems-site-steer',
    site,
    siteType: 'str',
    mode: 'ess',
    essValue: 'payload',
    essValueType: 'msg',
    essUnit: 'kW',
    curtailmentValue: '',
    curtailmentValueType: 'num',
    curtailmentUnit: 'kW',
    maximizeGridImport: 'unchanged',
    gridTargetValue: 'payload',
    gridTargetValueType: 'msg',
    gridTargetUnit: 'kW',
    deadbandValue: '',
    deadbandUnit: 'kW',
    validity: 'quarter-hour',
    duration: 15,
    renew: false,
    dryRun: false,
  };
  return {
    ...migrate('ems-site-steer', saved),
    maxEssPower: '',
    maxCurtailment: '',
    maxGridPower: '',
    maxGridLimit: '',
    ...extra,
  };
}

/**
 * A flow on one tab: the node under test (id `n`, wired to `out`), the config node, a helper
 * `out`, a Catch node (scope all) wired to a helper `caught`, and any more nodes.
 */
export function flow(
  node: Record<string, unknown>,
  config: Record<string, unknown>,
  ...more: Array<Record<string, unknown>>
): object[] {
  // x and y make them flow nodes of the tab (without them Node-RED takes a node for a config node).
  const at = { z: 'tab', x: 100, y: 100 };
  return [
    { id: 'tab', type: 'tab', label: 'test' },
    { id: 'n', ...at, server: 'cfg', wires: [['out']], ...node },
    config,
    { id: 'out', ...at, type: 'helper', wires: [] },
    { id: 'c', ...at, type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', ...at, type: 'helper', wires: [] },
    ...more.map((n) => ({ ...at, ...n })),
  ];
}

/** Collects what a helper node receives; `count(n)` awaits until n messages in total arrived. */
export class Inbox {
  readonly msgs: any[] = [];
  readonly listeners = new Set<() => void>();
  constructor(node: any) {
    node.on('input', (msg: any) => {
      this.msgs.push(msg);
      for (const fn of [...this.listeners]) fn();
    });
  }

  /** Resolves with the first `n` messages once that many arrived; rejects after `ms`. */
  async count(n: number, ms = 10_000, what = 'messages'): Promise<any[]> {
    await until(
      [this],
      () => this.msgs.length >= n,
      ms,
      () => `${n} ${what}; got ${this.msgs.length}`,
    );
    return this.msgs.slice(0, n);
  }

  /** The next message after those already received. */
  async next(ms?: number): Promise<any> {
    const all = await this.count(this.msgs.length + 1, ms);
    return all[all.length - 1];
  }
}

/** Resolves once `done()` holds, re-checked whenever one of the inboxes receives a message. */
export function until(boxes: Inbox[], done: () => boolean, ms: number, what: () => string): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!done()) return;
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${what()}`));
    }, ms);
    const cleanup = () => {
      clearTimeout(timer);
      for (const b of boxes) b.listeners.delete(check);
    };
    for (const b of boxes) b.listeners.add(check);
  });
}

/** Records every status a node shows, and awaits one that matches. */
export class StatusLog {
  readonly all: any[] = [];
  private waiters: Array<{ test: (s: any) => boolean; resolve: (s: any) => void }> = [];
  constructor(node: any) {
    node.on('call:status', (call: { args: any[] }) => {
      const status = call.args[0];
      this.all.push(status);
      this.waiters = this.waiters.filter((w) => (w.test(status) ? (w.resolve(status), false) : true));
    });
  }

  /** Resolves once `n` statuses that pass `test` were shown after the first `from` statuses. */
  async count(test: (s: any) => boolean, n: number, from = 0, ms = 10_000): Promise<void> {
    const seen = () => this.all.slice(from).filter(test).length;
    while (seen() < n) await this.wait(() => true, ms, `${n} matching statuses`);
  }

  /** Resolves with the first status from now on that passes `test`. */
  wait(test: (s: any) => boolean, ms = 10_000, what = 'status'): Promise<any> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${what}; saw ${JSON.stringify(this.all.slice(-5))}`)),
        ms,
      );
      this.waiters.push({
        test,
        resolve: (s) => {
          clearTimeout(timer);
          resolve(s);
        },
      });
    });
  }
}

/** Everything a standard flow offers a test: the node, its output and Catch inboxes, statuses. */
export interface Loaded {
  node: any;
  out: Inbox;
  caught: Inbox;
  status: StatusLog;
  /** Sends a message into the node under test. */
  send(msg?: Record<string, unknown>): void;
  /** Sends `msg` and awaits its one output message. */
  ask(msg?: Record<string, unknown>): Promise<any>;
  /** Sends `msg` and awaits its one Catch-able error (the Catch node's message). */
  fails(msg?: Record<string, unknown>): Promise<any>;
}

let loaded = false;

/** Loads a flow (unloading the one a test loaded before, as a redeploy would). */
export async function loadFlow(nodes: object[], credentials?: Record<string, object>): Promise<Loaded> {
  if (loaded) await helper.unload();
  loaded = true;
  await helper.load(NODES, nodes, credentials ?? {});
  const node = helper.getNode('n');
  const out = new Inbox(helper.getNode('out'));
  const caught = new Inbox(helper.getNode('caught'));
  const status = new StatusLog(node);
  const send = (msg: Record<string, unknown> = {}) => node.receive(msg);
  return {
    node,
    out,
    caught,
    status,
    send,
    async ask(msg = {}) {
      const [o, c] = [out.msgs.length, caught.msgs.length];
      send(msg);
      await until(
        [out, caught],
        () => out.msgs.length > o || caught.msgs.length > c,
        10_000,
        () => `an output (status ${JSON.stringify(status.all.at(-1))})`,
      );
      if (caught.msgs.length > c) throw new Error(`expected an output, got an error: ${caught.msgs[c].error.message}`);
      return out.msgs[o];
    },
    async fails(msg = {}) {
      const [o, c] = [out.msgs.length, caught.msgs.length];
      send(msg);
      await until(
        [out, caught],
        () => out.msgs.length > o || caught.msgs.length > c,
        10_000,
        () => `an error (status ${JSON.stringify(status.all.at(-1))})`,
      );
      if (out.msgs.length > o)
        throw new Error(`expected an error, got an output: ${JSON.stringify(out.msgs[o].payload)}`);
      return caught.msgs[c];
    },
  };
}

/** Entries of the simulator's log whose route matches. */
export function logged(s: StartedSimulator, route: string | RegExp): LogEntry[] {
  return s.sim.requestLog.filter((e) => (typeof route === 'string' ? e.route === route : route.test(e.route)));
}

/** GET on the simulator (the simulator-only reads such as /sites/<ref>/steering). */
export async function simGet(s: StartedSimulator, path: string, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(s.url + path, { headers });
  return res.json();
}

/** Arguments of every call of a Node method (e.g. 'status', 'error', 'warn') made by node `id` so far. */
export function callsOf(method: string, id: string): any[][] {
  const spy = (helper as any)._NodePrototype[method];
  return spy
    .getCalls()
    .filter((c: any) => c.thisValue?.id === id)
    .map((c: any) => c.args);
}

/**
 * Tracks the timers that this package's code (src/) creates from now on; `alive()` lists the
 * stacks of those not yet fired or cleared. Node's own timers (e.g. the HTTP date cache) and
 * the test's are left out.
 */
export function trackTimers(): { alive(): string[]; stop(): void } {
  const live = new Map<number, string>();
  const hook = async_hooks
    .createHook({
      init(id, type) {
        if (type !== 'Timeout') return;
        const stack = new Error().stack ?? '';
        if (/\/src\/(nodes|api)\//.test(stack))
          live.set(
            id,
            stack
              .split('\n')
              .filter((l) => l.includes('/src/'))
              .slice(0, 3)
              .join(' < '),
          );
      },
      destroy(id) {
        live.delete(id);
      },
    })
    .enable();
  return {
    alive: () => [...live.values()],
    stop: () => {
      hook.disable();
    },
  };
}

/** Lets the event loop turn `n` times (for socket closes that follow a destroy). */
export async function turns(n = 10): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** Timers and sockets alive in this process, by kind, for leak checks. */
export function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}
