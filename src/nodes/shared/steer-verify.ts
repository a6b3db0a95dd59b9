/**
 * The delivery check of `ems-site-steer` (the check itself: runtime/delivery-check.ts). With
 * `verify` on, every request the service accepted opens a window per component it carries,
 * from its acceptance (or its validFrom) to its validUntil; the next request of this node for
 * the same site and component ends the window before it at that moment. Windows, reports and
 * devices in users' words: docs/nodes/ems-site-steer.md, "Delivery check".
 */
import {
  DEFAULT_TOLERANCE,
  type DeliveryReport,
  DEVICE_ROLE,
  type DeviceRole,
  formatPower,
  type Limit,
  limited,
  LIMITS,
  show,
  type Tolerance,
  ValidationError,
} from '../../protocol';
import {
  type CheckDevices,
  componentsOf,
  DeliveryCheck,
  deliveryNow,
  type Runtime,
  type SteeringCommand,
} from '../../runtime';
import { evaluate } from './evaluate';
import { cachedSites } from './steer-percent';
import type { Status } from './status';
import type { Node, NodeMessage, RED } from './node-red-api';

const row = (key: 'verifyEvery' | 'tolerance' | 'toleranceMin'): Limit => LIMITS[key];

export interface VerifySettings {
  on: boolean;
  everyMs: number;
  tolerance: Tolerance;
}

/** The check's settings of a node (a ValidationError naming the property). */
export function verifySettingsOf(c: Record<string, unknown>): VerifySettings {
  const verify = c.verify;
  if (![undefined, '', true, false, 'true', 'false'].includes(verify as never))
    throw new ValidationError('verify', `must be true or false; got ${show(verify)}`);
  const on = verify === true || verify === 'true';
  // The settings count only with verify on (the editor checks them only then); off, a bad one is not used.
  if (!on) return { on, everyMs: 0, tolerance: { ...DEFAULT_TOLERANCE } };
  return {
    on,
    everyMs: limited(c.verifyEvery, row('verifyEvery'), 'verifyEvery') * 60_000,
    tolerance: {
      percent: limited(c.tolerance, row('tolerance'), 'tolerance'),
      minW: limited(c.toleranceMin, row('toleranceMin'), 'toleranceMin'),
    },
  };
}

/** A window replaced sooner than this after it began gives no report (a request merged with a later one in the queue). */
const MERGED_MS = 1000;

/** Most windows a node keeps open at once (sites × components, through msg.site). */
export const MAX_OPEN = 500;

/**
 * Ends a check whose window a later request replaced at `now`, with its report; one replaced
 * within MERGED_MS of its start (merged in the queue with a later request, so never in force
 * alone) or before it began ends without one.
 */
export function endReplaced(check: DeliveryCheck, now: number): void {
  if (now - check.req.from < MERGED_MS) check.cancel('replaced as it began');
  else check.end();
}

/** The node's warning when a check could not start (the request went out; its check must not fail it). */
export function warnNotStarted(node: Node, e: unknown): void {
  node.warn(`delivery check not started: ${e instanceof Error ? e.message : String(e)}`);
}

/**
 * What the delivery checks of site steer (SteerVerify) and the schedule (schedule/verify.ts)
 * share: the devices per site from the node's TypedInputs, the PV power of a `%` curtailment,
 * the checks still starting, and the report (status and output 2).
 */
export class VerifyCommon {
  /** Per site, the devices last evaluated (a renewal or a resumed schedule has no message of its own). */
  readonly devices = new Map<string, CheckDevices>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly d: Pick<VerifyDeps, 'RED' | 'node' | 'config' | 'status' | 'pvPeakPower'>) {}

  /** Keeps `p` (a check starting) until it settles, for settled(). */
  track(p: Promise<unknown>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Resolves once every check tracked so far has started. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /**
   * The devices of `roles` from the node's TypedInputs (batteryDevice, pvDevice, meterDevice)
   * evaluated with `msg`, over `base`; one that does not evaluate is '' (a report names the
   * missing device). Remembered as the site's devices.
   */
  async evaluate(
    site: string,
    roles: readonly DeviceRole[],
    msg: NodeMessage | undefined,
    base: CheckDevices = {},
  ): Promise<CheckDevices> {
    const out: CheckDevices = { ...base };
    for (const role of roles) {
      const key = `${role}Device`;
      const value = this.d.config[key];
      try {
        const evaluated =
          value === undefined || value === ''
            ? undefined
            : await evaluate(this.d.RED, this.d.node, value, String(this.d.config[`${key}Type`] || 'str'), msg ?? {});
        out[role] =
          evaluated === undefined || evaluated === null
            ? ''
            : typeof evaluated === 'string'
              ? evaluated
              : String(evaluated);
      } catch {
        out[role] = '';
      }
    }
    if (this.devices.size >= MAX_OPEN) this.devices.clear();
    this.devices.set(site, out);
    return out;
  }

  /** The site's installed PV power for a `%` curtailment: the node's pvPeakPower, else GET /sites. */
  async pvPower(rt: Runtime, site: string): Promise<number | undefined> {
    if (this.d.pvPeakPower() > 0) return this.d.pvPeakPower();
    try {
      const peakW = (await cachedSites(rt, () => rt.client.listSites())).find(
        (s) => s.siteReference === site,
      )?.pvPeakPower;
      return typeof peakW === 'number' && peakW > 0 ? peakW : undefined;
    } catch {
      return undefined;
    }
  }

  /** The verdict in the status, and the report on output 2 (`extra`: the schedule's slots). */
  report(r: DeliveryReport, extra?: { slots: number[] }): void {
    const translate = this.d.status.t;
    const verdict = translate(`followed${r.followed[0].toUpperCase()}${r.followed.slice(1)}`);
    const measured = r.measured ? formatPower(r.measured).replace(/^-/, '−') : undefined;
    this.d.status.verdict(
      measured ? translate('lastVerdict', { verdict, measured }) : translate('lastVerdictOnly', { verdict }),
    );
    this.d.node.send([null, { topic: 'delivery', site: r.site, ...extra, payload: r }]);
  }
}

export interface VerifyDeps {
  RED: RED;
  node: Node;
  config: Record<string, unknown>;
  status: Status;
  signal: AbortSignal;
  settings: VerifySettings;
  runtime(): Promise<Runtime>;
  /** The node's pvPeakPower, W (0 = not set): a `%` curtailment is checked in W of it. */
  pvPeakPower(): number;
}

export class SteerVerify {
  private readonly open = new Map<string, DeliveryCheck>();
  private readonly common: VerifyCommon;
  private warned = false;

  constructor(private readonly d: VerifyDeps) {
    this.common = new VerifyCommon(d);
  }

  /**
   * A request the service accepted: ends the windows of its components (now; a new value, a
   * renewal, a lift, a cancel) and opens new ones. Each window is checked when it ends, and every
   * `verifyEvery` minutes while it lasts; each check sends one report on output 2, and the status
   * adds the last verdict. Never rejects, never throws.
   */
  accepted(cmd: SteeringCommand, msg?: NodeMessage): void {
    if (!this.d.settings.on || this.d.signal.aborted) return;
    const warn = (e: unknown) => warnNotStarted(this.d.node, e);
    try {
      const now = deliveryNow();
      const { asked, ends } = componentsOf(cmd);
      for (const c of ends) this.endWindow(`${cmd.site}|${c}`, now);
      if (asked.length === 0 || cmd.validUntil === undefined) return;
      void this.start(cmd, asked, msg, now).catch(warn);
    } catch (e) {
      warn(e); // the request went out; its check must not fail the message
    }
  }

  private async start(
    cmd: SteeringCommand,
    asked: ReturnType<typeof componentsOf>['asked'],
    msg: NodeMessage | undefined,
    acceptedAt: number,
  ): Promise<void> {
    const roles = [...new Set(asked.map((a) => DEVICE_ROLE[a.component]))];
    const devices = await this.devicesFor(cmd.site, roles, msg);
    const rt = await this.d.runtime();
    const { settings } = this.d;
    const opened: Array<Promise<void>> = [];
    for (const { component, asked: a } of asked) {
      if (this.d.signal.aborted) return;
      const windowKey = `${cmd.site}|${component}`;
      if (!this.open.has(windowKey) && this.open.size >= MAX_OPEN) {
        if (!this.warned)
          this.d.node.warn(`delivery check: more than ${MAX_OPEN} windows open; further ones are not checked`);
        this.warned = true;
        continue;
      }
      if (a.kind === 'max' && a.value.unit === '%') a.percentOfW = await this.common.pvPower(rt, cmd.site);
      this.endWindow(windowKey, acceptedAt);
      const from = Math.max(acceptedAt, cmd.validFrom ?? acceptedAt);
      const check = new DeliveryCheck(
        { site: cmd.site, component, asked: a, from, until: cmd.validUntil!, devices },
        rt,
        {
          tolerance: settings.tolerance,
          everyMs: settings.everyMs,
          signal: this.d.signal,
          onReport: (r) => this.report(r),
        },
      );
      this.open.set(windowKey, check);
      opened.push(check.started);
      void check.done.then(() => {
        if (this.open.get(windowKey) === check) this.open.delete(windowKey);
      });
    }
    await Promise.all(opened);
  }

  /** Ends the window of `k` at `now` (endReplaced). */
  private endWindow(k: string, now: number): void {
    const prev = this.open.get(k);
    if (!prev) return;
    this.open.delete(k);
    endReplaced(prev, now);
  }

  /**
   * The devices a command needs (batteryDevice, pvDevice, meterDevice: TypedInputs evaluated with the
   * message that asked); a renewal has no message and reuses those of the site's last one.
   */
  private async devicesFor(site: string, roles: DeviceRole[], msg?: NodeMessage): Promise<CheckDevices> {
    const known = this.common.devices.get(site) ?? {};
    if (!msg && roles.every((r) => known[r] !== undefined)) return known;
    return this.common.evaluate(site, roles, msg, known);
  }

  private report(r: DeliveryReport): void {
    if (this.d.signal.aborted) return;
    this.common.report(r);
  }

  /** Cancels every open window (no report): a close or redeploy. */
  close(): void {
    for (const c of this.open.values()) c.cancel();
    this.open.clear();
    this.common.devices.clear();
  }
}
