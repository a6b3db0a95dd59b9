/**
 * `ems-site-steer`: turns messages into steering requests for a site. Building and checking
 * the command is done by steer-command.ts; sending by the config node's SteeringQueue (one
 * request at a time per site, merged per component); renewing by renewal.ts. The config
 * node's maxValidity bounds every signal (checked here, in dry runs too, and by the queue).
 */
import { formatClock, validateReference } from '../protocol';
import { requestForCommand, type SteeringCommand } from '../runtime';
import { evaluate } from './evaluate';
import { attributed, fail } from './messages';
import { flowNode } from './scaffold';
import { buildCommand, liftCommand, maxValidityMsOf, settingsOf, type NodeValues } from './steer-command';
import { Renewal, describeCommand, type RenewalEvent } from './renewal';
import type { DoneFn, Node, NodeMessage, RED, SendFn } from './red';

type Props = Record<string, unknown> & { server: string; site?: string; siteType?: string; renew?: boolean; dryRun?: boolean };

export = function (RED: RED): void {
  function EmsSiteSteerNode(this: Node, saved: Props) {
    const f = flowNode(RED, this, saved);
    const { node, props: config, server, status } = f;
    /** What a command sets, in the runtime's language: "ESS −50 kW[ until 14:15]". */
    const describe = (cmd: SteeringCommand, until = false) => describeCommand(cmd, until, status.t);
    let settingsError: unknown;
    let settings: ReturnType<typeof settingsOf> | undefined;
    try {
      settings = settingsOf(config);
    } catch (e) {
      settingsError = e;
      fail(f, undefined, e);
    }
    /** The config node's maxValidity as the runtime applies it (known once a request went out). */
    let runtimeMaxValidityMs: number | undefined;
    const renewal = new Renewal({
      send: (cmd) => send(cmd),
      status: (event: RenewalEvent, cmd?: SteeringCommand) => {
        if (event === 'renewed' && cmd) status.sent(status.t('renewed', { what: describe(cmd, true) }));
        else if (event === 'expired') status.ended(status.t('expired'));
        else if (event === 'failed') status.failing(status.t('renewalFailed'));
      },
      warn: (t) => node.warn(t),
      settings: () => settings!,
      maxValidityMs: () => runtimeMaxValidityMs ?? limitsOrNone().maxValidityMs,
    });
    /** Per site, the validUntil of the last curtailment this node sent (what a 'lift' stop lasts until). */
    const curtailedUntil = new Map<string, number>();

    async function send(cmd: SteeringCommand) {
      const rt = await server!.runtime();
      runtimeMaxValidityMs = rt.limits?.maxValidityMs;
      const r = await rt.steering.submit(cmd, { owner: node, signal: f.signal });
      if (cmd.productionCurtailment && cmd.validUntil !== undefined) {
        const now = Date.now();
        for (const [k, until] of curtailedUntil) if (until <= now) curtailedUntil.delete(k);
        curtailedUntil.set(cmd.site, cmd.validUntil);
      }
      return r;
    }

    /** Limits of the config node, read from its properties as the runtime reads them (so a dry run needs no runtime). */
    const limits = () => ({ maxValidityMs: maxValidityMsOf(server!.props?.maxValidity) });
    const limitsOrNone = (): { maxValidityMs?: number } => { try { return limits(); } catch { return {}; } };

    /** Whether stop lifts the curtailment of `ref` (stopAction 'lift', in a mode that steers curtailment). */
    function lifts(ref: string): boolean {
      const s = settings!;
      if (s.stopAction !== 'lift') return false;
      if (s.mode === 'curtailment') return true;
      return s.mode === 'combined' && ((config.curtailmentValue !== undefined && config.curtailmentValue !== '') || curtailedUntil.has(ref));
    }

    async function values(msg: NodeMessage): Promise<NodeValues> {
      const mode = settings!.mode;
      const ev = (key: string) => (config[key] === undefined || config[key] === '' ? undefined
        : evaluate(RED, node, config[key], String(config[`${key}Type`] ?? 'num'), msg));
      return {
        ess: mode === 'ess' || mode === 'combined' ? await ev('essValue') : undefined,
        curtailment: mode === 'curtailment' || mode === 'combined' ? await ev('curtailmentValue') : undefined,
        gridTarget: mode === 'grid-target' ? await ev('gridTargetValue') : undefined,
        deadband: mode === 'grid-target' && config.deadbandValue !== '' && config.deadbandValue !== undefined ? Number(config.deadbandValue) : undefined,
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

    async function handle(msg: NodeMessage): Promise<NodeMessage> {
      if (settingsError) throw settingsError;
      f.configNode(); // throws, naming `server`, when there is none
      const ref = await site(msg);
      if (msg.payload === 'stop' || msg.stop === true) {
        const stopped = renewal.stop(ref);
        if (settings!.mode === 'grid-target') {
          const cancel: SteeringCommand = { site: ref, kind: 'cancel-grid-target' };
          if (config.dryRun) {
            status.dryRun(status.t('dryRun', { what: status.t('cancelGridTarget') }));
            return { ...msg, payload: null, request: requestForCommand(cancel), site: ref, dryRun: true };
          }
          const r = await attributed(send(cancel), () => siteField(msg));
          status.ended(status.t('cancelled'));
          return { ...msg, payload: r.response, request: r.request, site: ref };
        }
        if (lifts(ref)) {
          const lift = liftCommand(settings!, ref, curtailedUntil.get(ref), Date.now(), limits());
          if (config.dryRun) {
            const request = requestForCommand(lift);
            status.dryRun(status.t('dryRunLift', { what: describe(lift) }));
            return { ...msg, payload: request.body ?? null, request, site: ref, dryRun: true };
          }
          const r = await attributed(send(lift), (svc) => (/site/i.test(svc) ? siteField(msg) : 'pvPeakPower'));
          status.ended(status.t('lifted', { time: formatClock(lift.validUntil!) }));
          return { ...msg, payload: r.response, request: r.request, site: ref };
        }
        status.ended(status.t(stopped ? 'renewStopped' : 'stopped'));
        return { ...msg, payload: { stopped: true, renewing: false }, site: ref };
      }
      const cmd = buildCommand(settings!, ref, msg.payload, await values(msg), Date.now(), limits());
      if (config.dryRun) {
        const request = requestForCommand(cmd);
        status.dryRun(status.t('dryRun', { what: describe(cmd) }));
        return { ...msg, payload: request.body ?? null, request, site: ref, dryRun: true };
      }
      // The new signal replaces the renewed one: a renewal must not resend old values after it.
      renewal.stop(ref);
      status.busy(status.t('sending', { what: describe(cmd) }));
      const r = await attributed(send(cmd), (svc) => (/site/i.test(svc) ? siteField(msg) : 'msg.payload'));
      status.sent(status.t('sent', { what: describe(cmd, true) }));
      if (config.renew) renewal.schedule(cmd);
      return { ...msg, payload: r.response, request: r.request, site: ref, merged: r.merged || undefined };
    }

    node.on('input', (msg: NodeMessage, sendOut: SendFn, done: DoneFn) => {
      handle(msg).then((out) => {
        if (f.signal.aborted) return done();
        sendOut(out);
        done();
      }, (err) => fail(f, done, err, msg));
    });

    f.onClose(() => {
      renewal.close();
      // Steering of this node still queued is not sent (and said so).
      return server?.runtime().then((rt) => {
        const dropped = rt.steering.dropOwner(node, 'node closed or redeployed');
        if (dropped.length) node.warn(`steering not sent (node closed): ${dropped.join('; ')}`);
      }, () => undefined);
    });
  }

  RED.nodes.registerType('ems-site-steer', EmsSiteSteerNode);
};
