/**
 * What an `ems-site-steer` node does with its messages (index.ts wires it into Node-RED).
 * Building and checking the command is done by steer-command.ts; sending by the config
 * node's SteeringQueue through sender.ts; renewing by renewal.ts; the delivery check by
 * steer-verify.ts; a fleet and portfolio by fleet.ts; a stop by stop.ts. The status says what
 * was sent, never that it is in force (steering is a recommendation).
 */
import { limitKeysOf, MODE_COMPONENTS, noLimitWarning, ratingNeeded, resolvePaths } from '../../protocol';
import { type ApiError, refusedField } from '../../client';
import { percentCurtailmentOf, type Runtime, type SteeringCommand, type SteeringResult } from '../../runtime';
import {
  buildCommand,
  cachedSites,
  checkSiteRatings,
  convertPercent,
  describeCommand,
  fail,
  type FlowNode,
  type InputContext,
  maxValidityMsOf,
  type NodeMessage,
  type RED,
  Renewal,
  type RenewalEvent,
  reply,
  settingsOf,
  SteerVerify,
  verifySettingsOf,
} from '../shared';
import { fleetOf, fleetSettingsOf, steerFleet, type FleetDeps, type FleetSettings } from './fleet';
import { SteerGroup } from './group';
import { SteerInputs } from './inputs';
import { SteerSender, type SteerProps } from './sender';
import { SentHold } from './sent-hold';
import { steerStop } from './stop';

export class SiteSteerController {
  /** The node's settings, checked at deploy (undefined, with settingsError, when they are unusable). */
  readonly settings?: ReturnType<typeof settingsOf>;
  private readonly fleet?: FleetSettings;
  private readonly settingsError?: unknown;
  /** The delivery check (verify on). */
  readonly verifier?: SteerVerify;
  readonly inputs: SteerInputs;
  readonly sender: SteerSender;
  readonly renewal: Renewal;
  readonly group: SteerGroup;
  /** The status of overlapping one-site messages. */
  private readonly hold: SentHold;
  /** Said once: fleet messages get no delivery check. */
  private warnedFleetCheck = false;
  /** The config node's limits, once read (limits()). */
  private configLimits?: Readonly<{ maxValidityMs: number }>;

  constructor(
    private readonly RED: RED,
    readonly f: FlowNode<SteerProps>,
  ) {
    const { node, props: config, server, status } = f;
    try {
      this.settings = settingsOf(config);
      this.fleet = fleetSettingsOf(config);
      // A limit turned off (a flow saved before limits were on by default): said once, at deploy.
      const unlimited = noLimitWarning(this.settings.none, limitKeysOf(MODE_COMPONENTS[this.settings.mode]));
      if (unlimited) node.warn(unlimited);
      this.verifier = this.verifierOf();
    } catch (e) {
      this.settingsError = e;
      fail(f, undefined, e);
    }
    this.inputs = new SteerInputs(RED, node, config);
    this.renewal = new Renewal({
      // In a group the renewal is claimed first: it goes out from one instance only.
      send: (cmd, prev) =>
        this.group
          .renewal(server!.runtime(), cmd, prev)
          .then(() => this.sender.send(cmd, undefined, undefined, f.signal, !this.sender.byFleet.has(cmd.site))),
      status: (event, cmd, result, err) => this.renewalStatus(event, cmd, result, err),
      warn: (t) => node.warn(t),
      settings: () => this.settings!,
      maxValidityMs: () => this.sender.maxValidityMs ?? this.limitsOrNone().maxValidityMs,
    });
    this.group = new SteerGroup({ id: node.id, renewal: this.renewal, renew: !!config.renew, status });
    this.sender = new SteerSender(f, this.verifier);
    this.hold = new SentHold(status);
    if (server && !config.dryRun) this.group.watchOwn(server.runtime(), config, f.signal);
  }

  /** The delivery check of a node with verify on (undefined with it off). */
  private verifierOf(): SteerVerify | undefined {
    const { node, props: config, status, server } = this.f;
    const settings = verifySettingsOf(config);
    if (!settings.on) return undefined;
    return new SteerVerify({
      RED: this.RED,
      node,
      config,
      status,
      signal: this.f.signal,
      settings,
      runtime: () => server!.runtime(),
      pvPeakPower: () => this.settings!.pvPeakPower,
    });
  }

  private renewalStatus(event: RenewalEvent, cmd?: SteeringCommand, result?: SteeringResult, err?: Error): void {
    const status = this.f.status;
    if (event === 'renewed' && cmd && result)
      this.sender.shown(status.t('renewed', { what: this.describe(cmd, true) }), result);
    else if (event === 'not-steering') status.error(err);
    else if (event === 'expired') status.ended(status.t('expired'));
    else if (event === 'failed') status.failing(status.t('renewalFailed'));
  }

  /** What a command sets, in the runtime's language: "ESS −50 kW[ until 14:15]". */
  describe(cmd: SteeringCommand, until = false): string {
    return describeCommand(cmd, until, this.f.status.t);
  }

  /**
   * Limits of the config node, read from its properties as the runtime reads them (so a dry run
   * needs no runtime). The config node's maxValidity bounds every signal: checked here, in dry runs
   * too, and by the queue. Read once: a config node's properties change only by a redeploy, which
   * makes this node anew; a maxValidity the runtime refuses is refused again on every message.
   */
  limits(): Readonly<{ maxValidityMs: number }> {
    return (this.configLimits ??= Object.freeze({ maxValidityMs: maxValidityMsOf(this.f.server!.props?.maxValidity) }));
  }

  private limitsOrNone(): { maxValidityMs?: number } {
    try {
      return this.limits();
    } catch {
      return {};
    }
  }

  /** The paths of the config node, as the runtime resolves them (dry runs). */
  paths(): ReturnType<typeof resolvePaths> {
    return resolvePaths(this.f.server!.props as Record<string, unknown>);
  }

  /**
   * A `%` curtailment in W (steer-percent.ts; unless the config node's percentCurtailment sends %):
   * PV power from the node, msg.pvPeakPower or GET /sites.
   */
  async converted(cmd: SteeringCommand, msg: NodeMessage): Promise<SteeringCommand> {
    if (cmd.productionCurtailment?.unit !== '%') return cmd;
    const server = this.f.server!;
    const rt: Promise<Runtime> | undefined = this.f.props.dryRun ? undefined : server.runtime();
    const mode = rt ? (await rt).percentCurtailment : percentCurtailmentOf(server.props);
    const sites = async () => {
      const runtime = await (rt ?? server.runtime());
      return cachedSites(runtime, () => runtime.client.listSites());
    };
    const settings = this.settings!;
    return convertPercent(
      cmd,
      mode,
      { node: settings.pvPeakPower, msg: msg.pvPeakPower, sites },
      { maxCurtailment: settings.maxCurtailment },
    );
  }

  /** Refuses a command beyond the site's rating where the node's limit is not set (essW: a fleet entry's maxPowerW). */
  async rated(cmd: SteeringCommand, essW?: number): Promise<void> {
    const sites = async () => {
      const runtime = await this.f.server!.runtime();
      return cachedSites(runtime, () => runtime.client.listSites());
    };
    await checkSiteRatings(cmd, this.settings!.rating, cmd.site, {
      sites,
      essW,
      essFrom: 'maxPowerW in the site list',
      pvW: this.settings!.pvPeakPower,
      pvFrom: "the node's pvPeakPower",
    });
  }

  /** Whether stop lifts the curtailment of `ref` (stopAction 'lift', in a mode that steers curtailment). */
  lifts(ref: string): boolean {
    const settings = this.settings!;
    if (settings.stopAction !== 'lift') return false;
    if (settings.mode === 'curtailment') return true;
    const value = this.f.props.curtailmentValue;
    return (
      settings.mode === 'combined' && ((value !== undefined && value !== '') || this.sender.curtailedUntil.has(ref))
    );
  }

  /** In a group, a request goes out only from the leader of its site: the others answer "standby". */
  notLeading(ref: string, copy: InputContext['copy']): Promise<NodeMessage | undefined> | undefined {
    if (this.f.props.dryRun) return undefined;
    const known = this.sender.runtime();
    // Without a group every instance leads: nothing to ask (and, once the runtime is known, nothing to await).
    if (known instanceof Promise)
      return known.then((runtime) => (runtime.gate ? this.group.standby(runtime, ref, copy) : undefined));
    return known.gate ? this.group.standby(known, ref, copy) : undefined;
  }

  /** What the fleet part needs of the node (fleet.ts). */
  private fleetDeps(): FleetDeps {
    const { props: config, status, server } = this.f;
    return {
      settings: this.settings!,
      fleet: this.fleet!,
      status,
      signal: this.f.signal,
      dryRun: !!config.dryRun,
      renew: !!config.renew,
      renewal: this.renewal,
      values: async (msg) => this.inputs.values(this.settings!.mode, msg),
      limits: () => this.limits(),
      paths: () => this.paths(),
      runtime: () => server!.runtime(),
      converted: (cmd, msg) => this.converted(cmd, msg),
      rated: (cmd, essW) => this.rated(cmd, essW),
      lifts: (ref) => this.lifts(ref),
      sites: (rt) => cachedSites(rt, () => rt.client.listSites()),
      send: (cmd, submitted, msg, signal) => this.sender.sendForFleet(cmd, submitted, msg, signal),
      curtailedUntil: (ref) => this.sender.curtailedUntil.get(ref),
    };
  }

  /**
   * A message. Messages reach the queue in arrival order: each waits until the one before it
   * was queued (release) or ended (a % curtailment that reads GET /sites must not be overtaken).
   */
  async onInput(msg: NodeMessage, ctx: InputContext) {
    if (this.settingsError) throw this.settingsError;
    this.f.configNode(); // throws, naming `server`, when there is none
    const many = fleetOf(msg, this.fleet!);
    if (many || this.settings!.mode === 'portfolio') return this.onFleet(msg, many?.sites, ctx);
    const site = this.inputs.site(msg);
    const ref = typeof site === 'string' ? site : await site;
    this.sender.byFleet.delete(ref);
    if (msg.payload === 'stop' || msg.stop === true) return steerStop(this, msg, ref, ctx);
    return this.steer(msg, ref, ctx);
  }

  /** A fleet: its one output, and one Catch-able error listing the failed sites (status set by the fleet). */
  private async onFleet(msg: NodeMessage, sites: Parameters<typeof steerFleet>[2] | undefined, ctx: InputContext) {
    if (this.verifier && !this.warnedFleetCheck) {
      this.warnedFleetCheck = true;
      this.f.node.warn(
        "delivery check: fleet messages (msg.sites, the node's sites, mode portfolio) are not checked; the check takes one battery, PV and meter device, a fleet has one per site",
      );
    }
    const list = sites ?? [{ site: await this.inputs.site(msg) }];
    const out = await steerFleet(this.fleetDeps(), msg, list, ctx.release);
    return reply(out.out, out.error);
  }

  /** One site, one command: built, checked, then sent (or shown, in a dry run). */
  private async steer(msg: NodeMessage, ref: string, { copy, release }: InputContext) {
    const { props: config, status } = this.f;
    const settings = this.settings!;
    const given = this.inputs.values(settings.mode, msg);
    const values = given instanceof Promise ? await given : given;
    const built = buildCommand(settings, ref, msg.payload, values, Date.now(), this.limits());
    const leading = this.notLeading(ref, copy);
    const standby = leading === undefined ? undefined : await leading;
    if (standby) return standby;
    const cmd = built.productionCurtailment?.unit === '%' ? await this.converted(built, msg) : built;
    // (a dry run reads nothing: the site's rating is checked when it is sent)
    if (!config.dryRun && ratingNeeded(cmd, settings.rating)) await this.rated(cmd);
    if (config.dryRun) return this.sender.dryRun(cmd, 'dryRun', copy, ref, this.paths(), this.describe(cmd));
    // The new signal replaces the renewed one: a renewal must not resend old values after it.
    this.renewal.stop(ref);
    // The status texts are made only when they show (sent-hold.ts).
    this.hold.start(() => status.busy(status.t('sending', { what: this.describe(cmd) })));
    let result: SteeringResult;
    try {
      result = await this.sender.send(cmd, release, msg);
    } catch (err) {
      this.hold.failed();
      throw refusedField(
        err,
        siteOrPayload(err, () => this.inputs.siteField(msg)),
      );
    }
    this.hold.sent(() => this.sender.shown(status.t('sent', { what: this.describe(cmd, true) }), result));
    if (config.renew) this.group.renewing(cmd); // renewed from here (and recorded in a group)
    // msg.merged only when the queue merged this message's values into a later request.
    if (result.merged) return copy({ payload: result.response, request: result.request, site: ref, merged: true });
    const out = copy({ payload: result.response, request: result.request, site: ref });
    if ('merged' in out) delete out.merged; // an upstream node's flag does not describe this request
    return out;
  }

  /** Closing: no more renewals or checks; steering of this node still queued is not sent (and said so). */
  onClose(): Promise<void> | undefined {
    this.renewal.close();
    this.group.close();
    this.verifier?.close();
    const { node, server } = this.f;
    return server?.runtime().then(
      (rt) => {
        const dropped = rt.steering.dropOwner(node, 'node closed or redeployed');
        if (dropped.length) node.warn(`steering not sent (node closed): ${dropped.join('; ')}`);
      },
      () => undefined,
    );
  }
}

/** The field a refusal of one site's request names: the site when the service's message is about it, else the payload. */
function siteOrPayload(err: unknown, siteField: () => string): string {
  return /site/i.test((err as ApiError)?.serviceMessage ?? '') ? siteField() : 'msg.payload';
}
