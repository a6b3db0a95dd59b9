/**
 * `ems-site-steer`: turns messages into steering requests for a site. Building and checking
 * the command is done by steer-command.ts; sending by the config node's SteeringQueue (one
 * request at a time per site, merged per component); renewing by renewal.ts. The config
 * node's maxValidity bounds every signal (checked here, in dry runs too, and by the queue).
 * A `%` curtailment is converted to W by steer-percent.ts (config node percentCurtailment).
 * The status says what was sent, never that it is in force (steering is a recommendation);
 * a request that ends another steering type this Node-RED has in force on the site (asset
 * steering vs grid target) is sent with a warning. With `verify` on, steer-verify.ts checks
 * what the site delivered and reports on output 2. msg.sites or the node's `sites` steer a
 * fleet in one message, and mode portfolio splits one ESS power over it (fleet.ts).
 */
import {
  formatClock,
  limitKeysOf,
  MODE_COMPONENTS,
  noLimitWarning,
  resolvePaths,
  SERVICE,
  type SteeringType,
  validateReference,
} from '../../protocol';
import {
  type Displaced,
  percentCurtailmentOf,
  requestForCommand,
  runningScheduleFor,
  type Runtime,
  type SteeringCommand,
  type SteeringResult,
} from '../../runtime';
import {
  attributed,
  buildCommand,
  cachedSites,
  checkSiteRatings,
  convertPercent,
  describeCommand,
  evaluate,
  fail,
  flowNode,
  liftCommand,
  maxValidityMsOf,
  type Node,
  type NodeMessage,
  type NodeValues,
  type RED,
  Renewal,
  type RenewalEvent,
  reply,
  settingsOf,
  SteerVerify,
  verifySettingsOf,
  withUntil,
} from '../shared';
import { fleetOf, fleetSettingsOf, steerFleet, type FleetDeps, type FleetSettings } from './fleet';
import { SteerGroup } from './group';

type Props = Record<string, unknown> & {
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

export = function (RED: RED): void {
  function EmsSiteSteerNode(this: Node, saved: Props) {
    const f = flowNode(RED, this, saved);
    const { node, props: config, server, status } = f;
    /** What a command sets, in the runtime's language: "ESS −50 kW[ until 14:15]". */
    const describe = (cmd: SteeringCommand, until = false) => describeCommand(cmd, until, status.t);
    /** Shows what was sent ("sent ESS −50 kW until 14:15"), in yellow when it ended another steering type. */
    const shown = (text: string, r: SteeringResult) => {
      if (!r.displaced) return status.sent(text);
      const other = [...new Set(r.displaced.map((d) => status.t(TYPE_KEY[d.type])))].join(', ');
      status.sentWarning(status.t('displacing', { text, other }));
    };
    let settingsError: unknown;
    let settings: ReturnType<typeof settingsOf> | undefined;
    let fleet: FleetSettings | undefined;
    let verifier: SteerVerify | undefined;
    try {
      settings = settingsOf(config);
      fleet = fleetSettingsOf(config);
      // A limit turned off (a flow saved before limits were on by default): said once, at deploy.
      const unlimited = noLimitWarning(settings.none, limitKeysOf(MODE_COMPONENTS[settings.mode]));
      if (unlimited) node.warn(unlimited);
      const v = verifySettingsOf(config);
      if (v.on)
        verifier = new SteerVerify({
          RED,
          node,
          config,
          status,
          signal: f.signal,
          settings: v,
          runtime: () => server!.runtime(),
          pvPeakPower: () => settings!.pvPeakPower,
        });
      (node as typeof node & { delivery?: SteerVerify }).delivery = verifier; // tests and diagnostics
    } catch (e) {
      settingsError = e;
      fail(f, undefined, e);
    }
    /** The config node's maxValidity as the runtime applies it (known once a request went out). */
    let runtimeMaxValidityMs: number | undefined;
    const renewal = new Renewal({
      // In a group the renewal is claimed first: it goes out from one instance only.
      send: (cmd, prev) =>
        group
          .renewal(server!.runtime(), cmd, prev)
          .then(() => send(cmd, undefined, undefined, f.signal, !byFleet.has(cmd.site))),
      status: (event: RenewalEvent, cmd?: SteeringCommand, result?: SteeringResult, err?: Error) => {
        if (event === 'renewed' && cmd && result) shown(status.t('renewed', { what: describe(cmd, true) }), result);
        else if (event === 'not-steering') status.error(err);
        else if (event === 'expired') status.ended(status.t('expired'));
        else if (event === 'failed') status.failing(status.t('renewalFailed'));
      },
      warn: (t) => node.warn(t),
      settings: () => settings!,
      maxValidityMs: () => runtimeMaxValidityMs ?? limitsOrNone().maxValidityMs,
    });
    const group = new SteerGroup({ id: node.id, renewal, renew: !!config.renew, status });
    if (server && !config.dryRun) group.watchOwn(server.runtime(), config, f.signal);
    /** Sites last steered by a fleet message: neither they nor their renewals get a delivery check. */
    const byFleet = new Set<string>();
    let warnedFleetCheck = false;
    /** Per site, the validUntil of the last curtailment this node sent (what a 'lift' stop lasts until). */
    const curtailedUntil = new Map<string, number>();

    /** Sends through the queue; `submitted` is called once the command is queued (the next message may go on). */
    async function send(
      cmd: SteeringCommand,
      submitted?: () => void,
      msg?: NodeMessage,
      signal = f.signal,
      check = true,
    ) {
      const rt = await server!.runtime();
      const running = runningScheduleFor(rt, cmd.site);
      if (running)
        node.warn(
          `schedule "${running.name}" plays on ${cmd.site} until ${formatClock(running.until)}: this request and its next slot replace each other's components`,
        );
      runtimeMaxValidityMs = rt.limits?.maxValidityMs;
      const queued = rt.steering.submit(cmd, { owner: node, signal });
      submitted?.();
      const r = await queued;
      if (check) verifier?.accepted(cmd, msg);
      if (r.displaced) node.warn(displacedWarning(cmd, r.displaced));
      if (cmd.productionCurtailment && cmd.validUntil !== undefined) {
        const now = Date.now();
        for (const [k, until] of curtailedUntil) if (until <= now) curtailedUntil.delete(k);
        curtailedUntil.set(cmd.site, cmd.validUntil);
      }
      return r;
    }

    function displacedWarning(cmd: SteeringCommand, displaced: Displaced[]): string {
      const ended = displaced
        .map((d) => `the ${TYPE_NAME[d.type]} this Node-RED had in force until ${formatClock(d.validUntil)}`)
        .join(' and ');
      return `sent ${describeCommand(cmd, true)} to ${cmd.site}: the service ends ${ended} (asset steering and grid target cannot be used together; only the last received request counts)`;
    }

    /** Limits of the config node, read from its properties as the runtime reads them (so a dry run needs no runtime). */
    const limits = () => ({ maxValidityMs: maxValidityMsOf(server!.props?.maxValidity) });
    const limitsOrNone = (): { maxValidityMs?: number } => {
      try {
        return limits();
      } catch {
        return {};
      }
    };
    /** The paths of the config node, as the runtime resolves them (dry runs). */
    const paths = () => resolvePaths(server!.props as Record<string, unknown>);

    /** A `%` curtailment in W (unless the config node sends %): PV power from the node, msg.pvPeakPower or GET /sites. */
    async function converted(cmd: SteeringCommand, msg: NodeMessage): Promise<SteeringCommand> {
      if (cmd.productionCurtailment?.unit !== '%') return cmd;
      const rt: Promise<Runtime> | undefined = config.dryRun ? undefined : server!.runtime();
      const mode = rt ? (await rt).percentCurtailment : percentCurtailmentOf(server!.props);
      const sites = async () => {
        const r = await (rt ?? server!.runtime());
        return cachedSites(r, () => r.client.listSites());
      };
      return convertPercent(
        cmd,
        mode,
        { node: settings!.pvPeakPower, msg: msg.pvPeakPower, sites },
        { maxCurtailment: settings!.maxCurtailment },
      );
    }

    /** Refuses a command beyond the site's rating where the node's limit is not set (essW: a fleet entry's maxPowerW). */
    async function rated(cmd: SteeringCommand, essW?: number): Promise<void> {
      const sites = async () => {
        const r = await server!.runtime();
        return cachedSites(r, () => r.client.listSites());
      };
      await checkSiteRatings(cmd, settings!.rating, cmd.site, {
        sites,
        essW,
        essFrom: 'maxPowerW in the site list',
        pvW: settings!.pvPeakPower,
        pvFrom: "the node's pvPeakPower",
      });
    }

    /** Whether stop lifts the curtailment of `ref` (stopAction 'lift', in a mode that steers curtailment). */
    function lifts(ref: string): boolean {
      const s = settings!;
      if (s.stopAction !== 'lift') return false;
      if (s.mode === 'curtailment') return true;
      return (
        s.mode === 'combined' &&
        ((config.curtailmentValue !== undefined && config.curtailmentValue !== '') || curtailedUntil.has(ref))
      );
    }

    async function values(msg: NodeMessage): Promise<NodeValues> {
      const mode = settings!.mode;
      const ev = (key: string) =>
        config[key] === undefined || config[key] === ''
          ? undefined
          : evaluate(RED, node, config[key], String(config[`${key}Type`] ?? 'num'), msg);
      return {
        ess: mode === 'ess' || mode === 'combined' || mode === 'portfolio' ? await ev('essValue') : undefined,
        curtailment: mode === 'curtailment' || mode === 'combined' ? await ev('curtailmentValue') : undefined,
        gridTarget: mode === 'grid-target' ? await ev('gridTargetValue') : undefined,
        deadband:
          mode === 'grid-target' && config.deadbandValue !== '' && config.deadbandValue !== undefined
            ? Number(config.deadbandValue)
            : undefined,
        upperLimit: mode === 'grid-limits' ? await ev('upperLimitValue') : undefined,
        lowerLimit: mode === 'grid-limits' ? await ev('lowerLimitValue') : undefined,
        msgMaximizeGridImport: msg.maximizeGridImport,
        msgValidUntil: msg.validUntil,
        msgValidFrom: msg.validFrom,
      };
    }

    const siteField = (msg: NodeMessage) => (msg.site !== undefined ? 'msg.site' : 'site');
    async function site(msg: NodeMessage): Promise<string> {
      if (msg.site !== undefined) return validateReference(msg.site, 'msg.site');
      return validateReference(await evaluate(RED, node, config.site ?? '', config.siteType, msg), 'site');
    }

    /** What the fleet part needs of the node (fleet.ts). */
    const fleetDeps = (): FleetDeps => ({
      settings: settings!,
      fleet: fleet!,
      status,
      signal: f.signal,
      dryRun: !!config.dryRun,
      renew: !!config.renew,
      renewal,
      values,
      limits,
      paths,
      runtime: () => server!.runtime(),
      converted,
      rated,
      lifts,
      sites: (rt) => cachedSites(rt, () => rt.client.listSites()),
      send: (cmd, submitted, msg, signal) => {
        if (byFleet.size >= SERVICE.maxFleetSites * 2) byFleet.clear();
        byFleet.add(cmd.site);
        return attributed(send(cmd, submitted, msg, signal, false), (svc) =>
          /site/i.test(svc) ? 'site' : 'msg.payload',
        );
      },
      curtailedUntil: (ref) => curtailedUntil.get(ref),
    });

    // Messages reach the queue in arrival order: each waits until the one before it was queued
    // (release) or ended (a % curtailment that reads GET /sites must not be overtaken by a later message).
    f.onInput(
      async (msg, { copy, release }) => {
        if (settingsError) throw settingsError;
        f.configNode(); // throws, naming `server`, when there is none
        const many = fleetOf(msg, fleet!);
        if ((many || settings!.mode === 'portfolio') && verifier && !warnedFleetCheck) {
          warnedFleetCheck = true;
          node.warn(
            "delivery check: fleet messages (msg.sites, the node's sites, mode portfolio) are not checked; the check takes one battery, PV and meter device, a fleet has one per site",
          );
        }
        if (many || settings!.mode === 'portfolio') {
          // A fleet: its one output, and one Catch-able error listing the failed sites (status set by the fleet).
          const out = await steerFleet(fleetDeps(), msg, many?.sites ?? [{ site: await site(msg) }], release);
          return reply(out.out, out.error);
        }
        const ref = await site(msg);
        byFleet.delete(ref);
        // In a group, a request goes out only from the leader of its site: the others answer "standby".
        const notLeading = async () => (config.dryRun ? undefined : group.standby(await server!.runtime(), ref, copy));
        if (msg.payload === 'stop' || msg.stop === true) {
          const stopped = renewal.stop(ref);
          group.stopped(ref);
          const standby = settings!.mode === 'grid-target' || lifts(ref) ? await notLeading() : undefined;
          if (standby) return standby;
          if (settings!.mode === 'grid-target') {
            const cancel: SteeringCommand = { site: ref, kind: 'cancel-grid-target' };
            if (config.dryRun) {
              status.dryRun(status.t('dryRun', { what: status.t('cancelGridTarget') }));
              return copy({ payload: null, request: requestForCommand(cancel, paths()), site: ref, dryRun: true });
            }
            const r = await attributed(send(cancel, release, msg), () => siteField(msg));
            status.ended(status.t('cancelled'));
            return copy({ payload: r.response, request: r.request, site: ref });
          }
          if (lifts(ref)) {
            const lift = liftCommand(settings!, ref, curtailedUntil.get(ref), Date.now(), limits());
            if (config.dryRun) {
              const request = requestForCommand(lift, paths());
              status.dryRun(status.t('dryRunLift', { what: describe(lift) }));
              return copy({ payload: request.body ?? null, request, site: ref, dryRun: true });
            }
            const r = await attributed(send(lift, release, msg), (svc) =>
              /site/i.test(svc) ? siteField(msg) : 'pvPeakPower',
            );
            if (r.displaced) shown(status.t('lifted', { time: formatClock(lift.validUntil!) }), r);
            else status.ended(status.t('lifted', { time: formatClock(lift.validUntil!) }));
            return copy({ payload: r.response, request: r.request, site: ref });
          }
          status.ended(status.t(stopped ? 'renewStopped' : 'stopped'));
          return copy({ payload: { stopped: true, renewing: false }, site: ref });
        }
        const built = buildCommand(settings!, ref, msg.payload, await values(msg), Date.now(), limits());
        const standby = await notLeading();
        if (standby) return standby;
        const cmd = await converted(built, msg);
        if (!config.dryRun) await rated(cmd); // (a dry run reads nothing: the site's rating is checked when it is sent)
        if (config.dryRun) {
          const request = requestForCommand(cmd, paths());
          status.dryRun(status.t('dryRun', { what: describe(cmd) }));
          return copy({ payload: request.body ?? null, request, site: ref, dryRun: true });
        }
        // The new signal replaces the renewed one: a renewal must not resend old values after it.
        renewal.stop(ref);
        const what = describe(cmd);
        status.busy(status.t('sending', { what }));
        const r = await attributed(send(cmd, release, msg), (svc) =>
          /site/i.test(svc) ? siteField(msg) : 'msg.payload',
        );
        shown(status.t('sent', { what: withUntil(what, cmd, status.t) }), r);
        if (config.renew) group.renewing(cmd); // renewed from here (and recorded in a group)
        // msg.merged only when the queue merged this message's values into a later request.
        if (r.merged) return copy({ payload: r.response, request: r.request, site: ref, merged: true });
        const out = copy({ payload: r.response, request: r.request, site: ref });
        if ('merged' in out) delete out.merged; // an upstream node's flag does not describe this request
        return out;
      },
      { ordered: true },
    );

    f.onClose(() => {
      renewal.close();
      group.close();
      verifier?.close();
      // Steering of this node still queued is not sent (and said so).
      return server?.runtime().then(
        (rt) => {
          const dropped = rt.steering.dropOwner(node, 'node closed or redeployed');
          if (dropped.length) node.warn(`steering not sent (node closed): ${dropped.join('; ')}`);
        },
        () => undefined,
      );
    });
  }

  RED.nodes.registerType('ems-site-steer', EmsSiteSteerNode);
};
