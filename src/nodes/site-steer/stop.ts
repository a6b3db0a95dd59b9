/**
 * A stop for one site (msg.payload "stop" or msg.stop: true): the renewal ends; in mode
 * grid-target the grid target is cancelled; with stopAction 'lift' the curtailment is lifted
 * (a curtailment to the PV peak power until the one in force ends); otherwise the last signal
 * runs out by itself. In a group, only the leader of the site sends the cancel or the lift.
 */
import { formatClock } from '../../protocol';
import type { SteeringCommand } from '../../runtime';
import {
  attributed,
  type CommandLimits,
  type FlowNode,
  type InputContext,
  liftCommand,
  type NodeMessage,
  type Renewal,
  type SteerSettings,
} from '../shared';
import type { SteerGroup } from './group';
import type { SteerInputs } from './inputs';
import type { SteerProps, SteerSender } from './sender';

/** What a stop needs of the node (its controller). */
export interface StopHost {
  readonly f: FlowNode<SteerProps>;
  readonly settings?: SteerSettings;
  readonly renewal: Renewal;
  readonly group: SteerGroup;
  readonly sender: SteerSender;
  readonly inputs: SteerInputs;
  lifts(ref: string): boolean;
  notLeading(ref: string, copy: InputContext['copy']): Promise<NodeMessage | undefined> | undefined;
  limits(): CommandLimits;
  paths(): Parameters<SteerSender['dryRun']>[4];
  describe(cmd: SteeringCommand): string;
}

export async function steerStop(c: StopHost, msg: NodeMessage, ref: string, ctx: InputContext): Promise<NodeMessage> {
  const status = c.f.status;
  const stopped = c.renewal.stop(ref);
  c.group.stopped(ref);
  const mode = c.settings!.mode;
  const standby = mode === 'grid-target' || c.lifts(ref) ? await c.notLeading(ref, ctx.copy) : undefined;
  if (standby) return standby;
  if (mode === 'grid-target') return cancelGridTarget(c, msg, ref, ctx);
  if (c.lifts(ref)) return lift(c, msg, ref, ctx);
  status.ended(status.t(stopped ? 'renewStopped' : 'stopped'));
  return ctx.copy({ payload: { stopped: true, renewing: false }, site: ref });
}

async function cancelGridTarget(
  c: StopHost,
  msg: NodeMessage,
  ref: string,
  { copy, release }: InputContext,
): Promise<NodeMessage> {
  const status = c.f.status;
  const cancel: SteeringCommand = { site: ref, kind: 'cancel-grid-target' };
  if (c.f.props.dryRun) return c.sender.dryRun(cancel, 'dryRun', copy, ref, c.paths(), status.t('cancelGridTarget'));
  const result = await attributed(c.sender.send(cancel, release, msg), () => c.inputs.siteField(msg));
  status.ended(status.t('cancelled'));
  return copy({ payload: result.response, request: result.request, site: ref });
}

async function lift(c: StopHost, msg: NodeMessage, ref: string, { copy, release }: InputContext): Promise<NodeMessage> {
  const status = c.f.status;
  const cmd = liftCommand(c.settings!, ref, c.sender.curtailedUntil.get(ref), Date.now(), c.limits());
  if (c.f.props.dryRun) return c.sender.dryRun(cmd, 'dryRunLift', copy, ref, c.paths(), c.describe(cmd));
  const result = await attributed(c.sender.send(cmd, release, msg), (svc) =>
    /site/i.test(svc) ? c.inputs.siteField(msg) : 'pvPeakPower',
  );
  const text = status.t('lifted', { time: formatClock(cmd.validUntil!) });
  if (result.displaced) c.sender.shown(text, result);
  else status.ended(text);
  return copy({ payload: result.response, request: result.request, site: ref });
}
