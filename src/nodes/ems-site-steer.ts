/**
 * `ems-site-steer`: turns messages into steering requests for a site. Building and checking
 * the command is done by steer-command.ts; sending by the config node's SteeringQueue (one
 * request at a time per site, merged per component); renewing by renewal.ts. The config
 * node's maxValidity bounds every signal (checked here, in dry runs too, and by the queue).
 */
import { ValidationError, formatClock, validateReference } from '../protocol';
import { requestForCommand, type SteeringCommand } from '../runtime';
import { attributed, busyStatus, connectionStatus, evaluate, fail } from './common';
import { buildCommand, liftCommand, maxValidityMsOf, settingsOf, type NodeValues } from './steer-command';
import { Renewal, describeCommand } from './renewal';
import type { ConfigNode } from './config-node';
import type { DoneFn, Node, NodeMessage, RED, SendFn } from './red';

type Props = Record<string, unknown> & { server: string; site?: string; siteType?: string; renew?: boolean; dryRun?: boolean };

export = function (RED: RED): void {
  function EmsSiteSteerNode(this: Node, config: Props) {
    RED.nodes.createNode(this, config);
    const node = this;
    const server = RED.nodes.getNode(config.server) as ConfigNode | null;
    const closer = new AbortController();
    let settingsError: unknown;
    let settings: ReturnType<typeof settingsOf> | undefined;
    try {
      settings = settingsOf(config);
    } catch (e) {
      settingsError = e;
      fail(node, undefined, e);
    }
    /** The config node's maxValidity as the runtime applies it (known once a request went out). */
    let runtimeMaxValidityMs: number | undefined;
    const renewal = new Renewal({
      send: (cmd) => send(cmd),
      status: (s) => node.status(s),
      warn: (t) => node.warn(t),
      settings: () => settings!,
      maxValidityMs: () => runtimeMaxValidityMs ?? limitsOrNone().maxValidityMs,
    });
    /** Per site, the validUntil of the last curtailment this node sent (what a 'lift' stop lasts until). */
    const curtailedUntil = new Map<string, number>();
    const user = { onConnectionState: (s: { state: string }) => { const st = connectionStatus(s); if (st) node.status(st); } };
    if (server) server.register(user);
    else node.status({ fill: 'red', shape: 'ring', text: 'no server configured' });

    async function send(cmd: SteeringCommand) {
      const rt = await server!.runtime();
      runtimeMaxValidityMs = rt.limits?.maxValidityMs;
      const r = await rt.steering.submit(cmd, { owner: node, signal: closer.signal });
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
      if (!server) throw new ValidationError('server', 'must be an ems-partner-config node');
      const ref = await site(msg);
      if (msg.payload === 'stop' || msg.stop === true) {
        const stopped = renewal.stop(ref);
        if (settings!.mode === 'grid-target') {
          const cancel: SteeringCommand = { site: ref, kind: 'cancel-grid-target' };
          if (config.dryRun) {
            node.status({ fill: 'grey', shape: 'dot', text: 'dry run: cancel grid target' });
            return { ...msg, payload: null, request: requestForCommand(cancel), site: ref, dryRun: true };
          }
          const r = await attributed(send(cancel), () => siteField(msg));
          node.status({ fill: 'grey', shape: 'ring', text: 'grid target cancelled' });
          return { ...msg, payload: r.response, request: r.request, site: ref };
        }
        if (lifts(ref)) {
          const lift = liftCommand(settings!, ref, curtailedUntil.get(ref), Date.now(), limits());
          if (config.dryRun) {
            const request = requestForCommand(lift);
            node.status({ fill: 'grey', shape: 'dot', text: `dry run: lift, ${describeCommand(lift)}` });
            return { ...msg, payload: request.body ?? null, request, site: ref, dryRun: true };
          }
          const r = await attributed(send(lift), (svc) => (/site/i.test(svc) ? siteField(msg) : 'pvPeakPower'));
          node.status({ fill: 'grey', shape: 'ring', text: `curtailment lifted until ${formatClock(lift.validUntil!)}` });
          return { ...msg, payload: r.response, request: r.request, site: ref };
        }
        node.status({ fill: 'grey', shape: 'ring', text: stopped ? 'renew stopped' : 'stopped' });
        return { ...msg, payload: { stopped: true, renewing: false }, site: ref };
      }
      const cmd = buildCommand(settings!, ref, msg.payload, await values(msg), Date.now(), limits());
      if (config.dryRun) {
        const request = requestForCommand(cmd);
        node.status({ fill: 'grey', shape: 'dot', text: `dry run: ${describeCommand(cmd)}` });
        return { ...msg, payload: request.body ?? null, request, site: ref, dryRun: true };
      }
      // The new signal replaces the renewed one: a renewal must not resend old values after it.
      renewal.stop(ref);
      node.status(busyStatus(`sending ${describeCommand(cmd)}`));
      const r = await attributed(send(cmd), (svc) => (/site/i.test(svc) ? siteField(msg) : 'msg.payload'));
      node.status({ fill: 'green', shape: 'dot', text: describeCommand(cmd, true) });
      if (config.renew) renewal.schedule(cmd);
      return { ...msg, payload: r.response, request: r.request, site: ref, merged: r.merged || undefined };
    }

    node.on('input', (msg: NodeMessage, sendOut: SendFn, done: DoneFn) => {
      handle(msg).then((out) => {
        if (closer.signal.aborted) return done();
        sendOut(out);
        done();
      }, (err) => fail(node, done, err, msg));
    });

    node.on('close', (_removed, done) => {
      closer.abort();
      renewal.close();
      if (!server) return done();
      server.deregister(user);
      server.runtime().then((rt) => {
        const dropped = rt.steering.dropOwner(node, 'node closed or redeployed');
        if (dropped.length) node.warn(`steering not sent (node closed): ${dropped.join('; ')}`);
      }, () => undefined).finally(() => {
        node.status({});
        done();
      });
    });
  }

  RED.nodes.registerType('ems-site-steer', EmsSiteSteerNode);
};
