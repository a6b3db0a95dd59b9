/**
 * How `ems-site-steer` sends: through the config node's steering queue, with the warnings and
 * the status of what went out (a schedule playing on the site, a steering type the request
 * ended), and what later messages need to know of it (the curtailment in force until when,
 * the sites a fleet message steered). A dry run shows the request instead.
 */
import { formatClock, SERVICE, type SteeringType } from '../../protocol';
import {
  type Displaced,
  requestForCommand,
  runningScheduleFor,
  type Runtime,
  type SteeringCommand,
  type SteeringResult,
} from '../../runtime';
import {
  attributed,
  describeCommand,
  type FlowNode,
  type InputContext,
  type NodeMessage,
  type SteerVerify,
} from '../shared';

export type SteerProps = Record<string, unknown> & {
  server: string;
  site?: string;
  siteType?: string;
  renew?: boolean;
  dryRun?: boolean;
};

/** The status text naming each steering type (what a request ended). */
const TYPE_KEY: Record<SteeringType, string> = {
  asset: 'assetSteering',
  'grid-target': 'gridTargetSteering',
  'grid-limits': 'gridLimitsSteering',
};
/** The same in the warning (English, as every node.warn). */
const TYPE_NAME: Record<SteeringType, string> = {
  asset: 'asset steering (ESS, curtailment, maximize grid import)',
  'grid-target': 'grid target',
  'grid-limits': 'grid limits',
};

export class SteerSender {
  /** The config node's runtime once it resolved (it never changes while the node lives): no await per message. */
  private known?: Runtime;
  /** The config node's maxValidity as the runtime applies it (known once a request went out). */
  maxValidityMs?: number;
  /** Sites last steered by a fleet message: neither they nor their renewals get a delivery check. */
  readonly byFleet = new Set<string>();
  /** Per site, the validUntil of the last curtailment this node sent (what a 'lift' stop lasts until). */
  readonly curtailedUntil = new Map<string, number>();

  constructor(
    private readonly f: FlowNode<SteerProps>,
    private readonly verifier: SteerVerify | undefined,
  ) {}

  /** The config node's runtime (rejects when its settings are unusable). */
  runtime(): Runtime | Promise<Runtime> {
    return this.known ?? this.f.server!.runtime().then((rt) => (this.known = rt));
  }

  /**
   * Sends through the queue; `submitted` is called once the command is queued (the next message may go on).
   * A promise chain, not an async function: once the runtime is known, no await frame per message.
   */
  send(
    cmd: SteeringCommand,
    submitted?: () => void,
    msg?: NodeMessage,
    signal = this.f.signal,
    check = true,
  ): Promise<SteeringResult> {
    try {
      const known = this.known;
      if (!known)
        return Promise.resolve(this.runtime()).then((rt) => this.sendOn(rt, cmd, submitted, msg, signal, check));
      return this.sendOn(known, cmd, submitted, msg, signal, check);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private sendOn(
    rt: Runtime,
    cmd: SteeringCommand,
    submitted: (() => void) | undefined,
    msg: NodeMessage | undefined,
    signal: AbortSignal,
    check: boolean,
  ): Promise<SteeringResult> {
    const node = this.f.node;
    const running = runningScheduleFor(rt, cmd.site);
    if (running)
      node.warn(
        `schedule "${running.name}" plays on ${cmd.site} until ${formatClock(running.until)}: this request and its next slot replace each other's components`,
      );
    this.maxValidityMs = rt.limits?.maxValidityMs;
    const queued = rt.steering.submit(cmd, { owner: node, signal });
    submitted?.();
    return queued.then((result) => {
      if (check) this.verifier?.accepted(cmd, msg);
      if (result.displaced) node.warn(displacedWarning(cmd, result.displaced));
      if (cmd.productionCurtailment && cmd.validUntil !== undefined) {
        const now = Date.now();
        for (const [k, until] of this.curtailedUntil) if (until <= now) this.curtailedUntil.delete(k);
        this.curtailedUntil.set(cmd.site, cmd.validUntil);
      }
      return result;
    });
  }

  /** A site of a fleet message: sent without a delivery check, refusals attributed to the site or the payload. */
  sendForFleet(
    cmd: SteeringCommand,
    submitted: () => void,
    msg: NodeMessage,
    signal: AbortSignal,
  ): Promise<SteeringResult> {
    if (this.byFleet.size >= SERVICE.maxFleetSites * 2) this.byFleet.clear();
    this.byFleet.add(cmd.site);
    return attributed(this.send(cmd, submitted, msg, signal, false), (svc) =>
      /site/i.test(svc) ? 'site' : 'msg.payload',
    );
  }

  /** Shows what was sent ("sent ESS −50 kW until 14:15"), in yellow when it ended another steering type. */
  shown(text: string, r: SteeringResult): void {
    const status = this.f.status;
    if (!r.displaced) return status.sent(text);
    const other = [...new Set(r.displaced.map((d) => status.t(TYPE_KEY[d.type])))].join(', ');
    status.sentWarning(status.t('displacing', { text, other }));
  }

  /** A dry run's answer: the request `cmd` would be sent as, and the status `key` describing it. */
  dryRun(
    cmd: SteeringCommand,
    key: string,
    copy: InputContext['copy'],
    site: string,
    paths: Parameters<typeof requestForCommand>[1],
    what: string,
  ): NodeMessage {
    const request = requestForCommand(cmd, paths);
    this.f.status.dryRun(this.f.status.t(key, { what }));
    return copy({ payload: request.body ?? null, request, site, dryRun: true });
  }
}

function displacedWarning(cmd: SteeringCommand, displaced: Displaced[]): string {
  const ended = displaced
    .map((d) => `the ${TYPE_NAME[d.type]} this Node-RED had in force until ${formatClock(d.validUntil)}`)
    .join(' and ');
  return `sent ${describeCommand(cmd, true)} to ${cmd.site}: the service ends ${ended} (asset steering and grid target cannot be used together; only the last received request counts)`;
}
