/** the flow and the child process of the group acceptance suite (from group-acceptance). */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { BUILT_IN_SITES, type SiteDefinition } from '../../src/simulator/index';
import { makeReference } from '../../src/simulator/prng';
import { siteSteer } from './red';

export const LEASE_MS = 1500;
export const SLOT_MS = 4000;
export const [S1, S2, S3] = BUILT_IN_SITES.map((s) => s.siteReference);
/** Sites enough for 300 devices (battery, PV and meter each): the built-in ones and generated ones. */
export const FLEET: SiteDefinition[] = Array.from({ length: 100 - BUILT_IN_SITES.length }, (_, i) => {
  const key = `group/${i}`;
  return {
    siteReference: makeReference('ste', key),
    name: `Fleet site ${i}`,
    battery: {
      deviceReference: makeReference('dvc', `${key}/battery`),
      name: `Battery ${i}`,
      maxPowerW: 10_000,
      capacityWh: 20_000,
      initialSoc: 50,
      initialConsumedWh: 0,
      initialProducedWh: 0,
    },
    pv: { deviceReference: makeReference('dvc', `${key}/pv`), name: `PV ${i}`, peakW: 10_000, initialProducedWh: 0 },
    meter: {
      deviceReference: makeReference('dvc', `${key}/meter`),
      name: `Meter ${i}`,
      initialImportWh: 0,
      initialExportWh: 0,
    },
    load: { profile: 'residential', minW: 500, maxW: 3_000 },
  };
});
export const DEVICES = [...BUILT_IN_SITES, ...FLEET].flatMap((s) => [
  s.battery.deviceReference,
  s.pv.deviceReference,
  s.meter.deviceReference,
]);
/** The polling interval, s: two intervals outlast a dead member's heartbeat (3 leases). */
export const POLL_S = 4;
const at = { z: 'tab', x: 10, y: 10 };

export function flowFor(sim: string, redis: string): object[] {
  const cfg = (id: string, extra: object) => ({
    id,
    type: 'ems-partner-config',
    baseUrl: sim,
    simulator: false,
    authType: 'none',
    retries: 0,
    coalesceMs: 0,
    redisUrl: redis,
    ...extra,
  });
  // the node as the editor saves it (helpers/red.ts), on config node cfgB, its output to a helper
  const steer = (id: string, site: string, extra: object) => ({
    id,
    ...at,
    ...siteSteer(site, { server: 'cfgB', wires: [[`${id}-out`]], ...extra }),
  });
  const helperNode = (id: string) => ({ id, ...at, type: 'helper', wires: [] });
  return [
    { id: 'tab', type: 'tab', label: 'group' },
    cfg('cfgA', { maxPerMinute: 50 }),
    cfg('cfgB', {}),
    {
      id: 'reads',
      ...at,
      type: 'ems-device-read',
      server: 'cfgA',
      mode: 'devices',
      device: '',
      deviceType: 'str',
      wires: [['reads-out']],
    },
    {
      id: 'readB',
      ...at,
      type: 'ems-device-read',
      server: 'cfgB',
      mode: 'devices',
      device: '',
      deviceType: 'str',
      wires: [['readB-out']],
    },
    {
      id: 'poll',
      ...at,
      type: 'ems-device-read',
      server: 'cfgB',
      mode: 'map',
      device: JSON.stringify(DEVICES),
      deviceType: 'json',
      properties: 'power',
      propertiesType: 'str',
      interval: POLL_S,
      wires: [['poll-out']],
    },
    steer('steer1', S1, {}),
    steer('renew3', S3, { validity: 'duration', duration: 0.1, renew: true }),
    {
      id: 'sched2',
      ...at,
      type: 'ems-schedule',
      server: 'cfgB',
      site: S2,
      siteType: 'str',
      essUnit: 'kW',
      curtailmentUnit: 'kW',
      gridUnit: 'kW',
      verify: true,
      wires: [['sched2-out'], ['sched2-report']],
    },
    { id: 'c', ...at, type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    ...['reads-out', 'readB-out', 'poll-out', 'steer1-out', 'renew3-out', 'sched2-out', 'sched2-report', 'caught'].map(
      helperNode,
    ),
  ];
}

export class Instance {
  readonly outs: Array<{ node: string; msg: any; at: number }> = [];
  readonly statuses: Array<{ node: string; status: any }> = [];
  ids: Record<string, string> = {};
  readonly child: ChildProcess;
  private ready?: (ids: Record<string, string>) => void;
  dead = false;

  constructor(readonly name: string) {
    this.child = fork(path.join(__dirname, 'group-instance.ts'), [], {
      execArgv: ['--require', 'tsx/cjs'],
      env: { ...process.env, EMS_GROUP_LEASE_MS: String(LEASE_MS) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.child.on('message', (m: any) => {
      if (m.type === 'out') this.outs.push({ ...m, at: Date.now() });
      else if (m.type === 'status') this.statuses.push(m);
      else if (m.type === 'ready') this.ready?.(m.instances);
      else if (m.type === 'fatal') console.error(`${name}: ${m.message}`);
    });
    this.child.on('exit', () => {
      this.dead = true;
    });
  }

  async load(flow: object[]): Promise<void> {
    const ready = new Promise<Record<string, string>>((resolve) => {
      this.ready = resolve;
    });
    this.child.send({
      type: 'load',
      flow,
      credentials: {},
      watch: [
        'reads-out',
        'readB-out',
        'poll-out',
        'steer1-out',
        'renew3-out',
        'sched2-out',
        'sched2-report',
        'caught',
      ],
      statuses: ['steer1', 'renew3', 'sched2'],
    });
    this.ids = await ready;
  }

  input(node: string, msgs: object[]): void {
    this.child.send({ type: 'input', node, msgs });
  }

  of(node: string): any[] {
    return this.outs.filter((o) => o.node === node).map((o) => o.msg);
  }

  lastStatus(node: string): string | undefined {
    return this.statuses.filter((s) => s.node === node).at(-1)?.status?.text;
  }

  kill(): Promise<void> {
    if (this.dead) return Promise.resolve();
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGKILL');
    return gone;
  }

  async stop(): Promise<void> {
    if (this.dead) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}
