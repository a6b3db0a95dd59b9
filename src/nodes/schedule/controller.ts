/**
 * What an `ems-schedule` node does (index.ts wires it): a schedule checked as a whole, then
 * played by the SchedulePlayer on the config node's SteeringQueue (a dry run sends nothing: its
 * plan is the output); the state saved in the node's context (StateWriter) and resumed after a
 * redeploy or restart; the delivery check per slot (verify.ts) and the group's claims (group.ts).
 */
import { formatClock, resolvePaths, runsOf, validateReference } from '../../protocol';
import {
  clearRunningSchedule,
  type DeliveryCheckHook,
  deliveryClock,
  isNotSteering,
  noDeliveryCheck,
  percentCurtailmentOf,
  type PlayerState,
  type PlayRun,
  runningScheduleFor,
  type Runtime,
  SchedulePlayer,
  setRunningSchedule,
  SharedClock,
  type SteeringCommand,
  type SteeringResult,
} from '../../runtime';
import {
  cachedSites,
  type ConfigNode,
  evaluate,
  fail,
  type FlowNode,
  type InputContext,
  maxValidityMsOf,
  type NodeMessage,
  type RED,
} from '../shared';
import { describeNext, describeRun } from './describe';
import { ScheduleGroup } from './group';
import { type Handed, handOver, takeHandover } from './handover';
import { loadSettings, type NodeSettings } from './settings';
import { checkSlots, planOf } from './slots';
import { type ContextNode, StateWriter } from './state-writer';
import { notResumed, readStored, restoreState, savedForm, STATE_KEY, text, where } from './stored';
import { ScheduleVerify } from './verify';

export type ScheduleProps = Record<string, unknown> & {
  server: string;
  site?: string;
  siteType?: string;
  name?: string;
};

/** How long a closing node waits for a request under way, so what was sent is saved. */
const CLOSE_WAIT_MS = 5_000;
const TYPE_NAME: Record<string, string> = {
  asset: 'asset steering',
  'grid-target': 'grid target',
  'grid-limits': 'grid limits',
};

const slotsOf = (run: PlayRun) => run.slots.map((s) => s.index);

export class ScheduleController {
  private readonly node: ContextNode;
  /** The node's settings (undefined when refused: `settingsError` says why). */
  private readonly settings: NodeSettings | undefined;
  private readonly settingsError: unknown;
  /** The context store the schedule is kept in (undefined: the default store). */
  private readonly store: string | undefined;
  /** The node's name, as other schedule nodes on the same site name it. */
  private readonly label: string;
  /** The config node's runtime, once asked for. */
  private runtime: Runtime | undefined;
  /** The node's one timer: the player's and the delivery checks' deadlines. */
  // The player's timer and the checks' deadlines share one SharedClock: one timer per node.
  private readonly clock = new SharedClock(deliveryClock());
  /** The delivery check per slot (verify on), else one that checks nothing. */
  private readonly verifier: ScheduleVerify | undefined;
  private readonly check: DeliveryCheckHook;
  private readonly player: SchedulePlayer;
  private readonly group: ScheduleGroup;
  private readonly writer: StateWriter;
  /** Settles once the saved schedule was resumed, or could not be (reported). */
  private readonly ready: Promise<void>;

  constructor(
    private readonly RED: RED,
    private readonly flow: FlowNode<ScheduleProps>,
  ) {
    this.node = flow.node as ContextNode;
    const { settings, error } = loadSettings(flow);
    this.settings = settings;
    this.settingsError = error;
    this.store = settings?.store || undefined;
    this.warnStore();
    this.label = String(flow.props.name || this.node.id);
    this.verifier = settings?.verify ? this.verifierOf(settings) : undefined;
    this.check = this.verifier ?? noDeliveryCheck();
    (this.node as ContextNode & { delivery?: ScheduleVerify }).delivery = this.verifier; // tests, diagnostics
    this.player = this.playerOf();
    this.group = new ScheduleGroup({ id: this.node.id, player: this.player, status: flow.status });
    this.writer = new StateWriter(this.node, this.store);
    this.ready = this.resume().catch((err) => fail(flow, undefined, err));
  }

  /**
   * Messages are handled in arrival order: a stop after a schedule stops that schedule. A dry
   * run's plan goes out from output 1; a schedule played sends nothing now (the player does).
   */
  async onInput(msg: NodeMessage, { copy }: InputContext): Promise<NodeMessage | undefined> {
    await this.ready;
    if (this.settingsError) throw this.settingsError;
    const settings = this.settings!;
    if (msg.payload === 'stop' || msg.stop === true) {
      this.player.stop();
      this.group.stopped();
      this.waitingStatus();
      return undefined;
    }
    const configNode = this.flow.configNode(); // throws, naming `server`, when there is none
    const siteRef = await this.site(msg);
    if (!settings.dryRun) this.runtime = await this.flow.runtime();
    const maxValidityMs =
      this.runtime && !settings.dryRun
        ? this.runtime.limits.maxValidityMs
        : maxValidityMsOf(configNode.props?.maxValidity);
    const now = Date.now();
    const slots = await this.checkedSlots(msg, settings, configNode, siteRef, now);
    const runs: PlayRun[] = runsOf(slots, maxValidityMs, Date.now()).map((run) => ({
      ...run,
      site: siteRef,
      total: slots.length,
    }));
    if (settings.dryRun) return copy(this.dryRun(runs, configNode, siteRef, now));
    await this.play(msg, siteRef, runs, slots[0].start);
    return undefined;
  }

  async onClose(removed: boolean): Promise<void> {
    const { node, player } = this;
    this.check.close();
    this.group.close();
    this.clock.close();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
    });
    // A request under way is awaited (bounded), so the next start knows it was sent.
    await Promise.race([player.close().then(() => this.writer.written()), bound]);
    clearTimeout(timer);
    if (!removed) handOver(this.RED, node.id, { state: player.state(), store: this.store, held: this.writer.held });
    const runtime = this.runtime;
    if (!runtime) return;
    clearRunningSchedule(runtime, node);
    const dropped = runtime.steering.dropOwner(node, 'node closed or redeployed');
    if (dropped.length) node.warn(`steering not sent (node closed): ${dropped.join('; ')}`);
  }

  /** The runtime asked for already, or the config node's. */
  private currentRuntime(): Promise<Runtime> {
    return this.runtime ? Promise.resolve(this.runtime) : this.flow.runtime();
  }

  private warnStore(): void {
    const store = this.store;
    const stores = (this.RED as RED & { settings?: { contextStorage?: Record<string, unknown> } }).settings
      ?.contextStorage;
    if (store && !(stores && store in stores))
      this.node.warn(
        `context store "${store}" is not configured (settings.js contextStorage): the schedule is kept in the default store and does not survive a restart of Node-RED`,
      );
  }

  private verifierOf(settings: NodeSettings): ScheduleVerify {
    const { RED, node, flow } = this;
    return new ScheduleVerify({
      RED,
      node,
      config: flow.props,
      status: flow.status,
      signal: flow.signal,
      settings: settings.check,
      clock: this.clock,
      runtime: () => this.currentRuntime(),
      pvPeakPower: () => settings.pvPeakPower,
    });
  }

  private playerOf(): SchedulePlayer {
    const { node, flow, clock } = this;
    const { status } = flow;
    return new SchedulePlayer({
      now: () => clock.now(),
      timers: clock,
      // In a group each request is claimed first: it goes out once, from the leader of the site.
      submit: async (cmd) => {
        await this.group.claim(this.runtime!, cmd);
        return this.runtime!.steering.submit(cmd, { owner: node });
      },
      sent: (run, cmd, result) => this.sent(run, cmd, result),
      failed: (run, cmd, err) => {
        if (flow.signal.aborted) return;
        // Standby, or sent by the group already: not a failure (the status says who steers).
        if (isNotSteering(err) && err.reason !== 'unreachable') return status.error(err);
        node.error(err, { payload: null, slots: slotsOf(run), site: run.site, command: cmd });
        status.error(err);
      },
      skipped: (run, reason) => {
        node.warn(`${describeRun(run, status.t)} not sent: ${reason}`);
        status.sentWarning(status.t('skipped', { slot: run.first + 1, total: run.total }));
      },
      done: () => status.ended(status.t('done')),
      changed: (state) => this.changed(state),
    });
  }

  /** A request went out: to the delivery check, on output 1, and in the status (with what it ended of another steering type). */
  private sent(run: PlayRun, cmd: SteeringCommand, result: SteeringResult): void {
    const { node, flow } = this;
    const { status } = flow;
    const { t } = status;
    this.check.sent(run, cmd, result);
    if (flow.signal.aborted) return;
    node.send([{ payload: result.response, request: result.request, slots: slotsOf(run), site: run.site }, null]);
    const text = describeRun(run, t);
    if (!result.displaced) return status.sent(text);
    const ended = result.displaced
      .map((d) => `the ${TYPE_NAME[d.type]} this Node-RED had in force until ${formatClock(d.validUntil)}`)
      .join(' and ');
    node.warn(`${text}: the service ends ${ended} (asset steering and grid target cannot be used together)`);
    const types = new Set(result.displaced.map((d) => t(d.type === 'asset' ? 'assetSteering' : 'gridTargetSteering')));
    status.sentWarning(t('displacing', { text, other: [...types].join(', ') }));
  }

  /** The player's state changed: the runtime's list of running schedules, and the saved state. */
  private changed(state: PlayerState): void {
    const { player } = this;
    if (this.runtime)
      setRunningSchedule(
        this.runtime,
        this.node,
        this.label,
        player.active ? [...state.runs, ...(player.current ? [player.current] : [])] : [],
      );
    this.writer.save(state);
  }

  /** Resumes the saved schedule (redeploy, restart): at the slot in progress, nothing twice; what cannot be read is kept. */
  private async resume(): Promise<void> {
    const { node, RED } = this;
    const handed = takeHandover(RED, node.id);
    if (handed && handed.store === this.store) this.writer.held = handed.held; // the store still holds what it could not read, nor keep elsewhere
    if (this.settingsError || !this.flow.server) return;
    const raw = await this.readSaved(handed);
    if (raw === undefined || raw === null) return;
    try {
      this.runtime = await this.flow.runtime();
    } catch (e) {
      throw notResumed(e, '');
    }
    const state = await this.restored(raw, this.runtime);
    this.group.resumed(this.runtime, state.runs, state.inForce);
    const passed = this.player.resume(state);
    if (passed > 0) node.warn(`schedule resumed: ${passed} run(s) ended while the node was stopped and were not sent`);
    this.waitingStatus();
  }

  /** The saved state: handed over by the node this one replaces, else read from the context. */
  private async readSaved(handed: Handed | undefined): Promise<unknown> {
    try {
      return handed ? savedForm(handed.state, Date.now()) : await readStored(this.node.context(), this.store);
    } catch (e) {
      const held = `${where(STATE_KEY, this.store)} could not be read (${text(e)}); nothing is written over it until it can`;
      this.writer.held = held;
      throw notResumed(e, `; ${held}`);
    }
  }

  /** The saved state checked again (stored.ts); what cannot be read is kept, and the error says where. */
  private async restored(raw: unknown, runtime: Runtime): Promise<PlayerState> {
    let state: PlayerState;
    let dropped: unknown;
    try {
      state = restoreState(raw, this.settings!, runtime.limits.maxValidityMs, (e) => {
        dropped = e;
      });
    } catch (e) {
      const kept = await this.writer.keep(raw, e);
      if (!this.writer.held) this.changed({ runs: [] }); // kept elsewhere: the node's key is free for the next schedule
      throw notResumed(e, kept);
    }
    if (dropped)
      this.node.warn(
        `stored schedule: the run in force was left out: ${text(dropped)}${await this.writer.keep(raw, dropped)}`,
      );
    return state;
  }

  private waitingStatus(): void {
    const { player } = this;
    const { status } = this.flow;
    const { t } = status;
    const current = player.current;
    const next = player.pending[0];
    if (player.wasStopped) status.ended(current ? t('stoppedUntil', { time: formatClock(current.end) }) : t('stopped'));
    else if (current && (!next || next.start > Date.now())) status.sent(describeRun(current, t));
    else if (next) status.ended(describeNext(next, t));
  }

  private async site(msg: NodeMessage): Promise<string> {
    if (msg.site !== undefined) return validateReference(msg.site, 'msg.site');
    const config = this.flow.props;
    return validateReference(await evaluate(this.RED, this.node, config.site ?? '', config.siteType, msg), 'site');
  }

  /** The message's slots, checked, with the sources of the PV power and the site's ratings (slots.ts). */
  private checkedSlots(msg: NodeMessage, settings: NodeSettings, configNode: ConfigNode, siteRef: string, now: number) {
    const sites = async () => {
      const runtime = await this.currentRuntime();
      return cachedSites(runtime, () => runtime.client.listSites());
    };
    const mode = this.runtime ? this.runtime.percentCurtailment : percentCurtailmentOf(configNode.props);
    return checkSlots(msg.payload, settings, siteRef, now, { mode, msg: msg.pvPeakPower, sites });
  }

  /** A dry run: the requests the schedule would send, as the output's fields; nothing is sent. */
  private dryRun(runs: PlayRun[], configNode: ConfigNode, siteRef: string, now: number): NodeMessage {
    const { status } = this.flow;
    const plan = planOf(runs, Date.now(), resolvePaths(configNode.props as Record<string, unknown>));
    status.dryRun(
      status.t('dryRun', {
        count: plan.length,
        from: formatClock(plan[0]?.at ?? now),
        until: formatClock(runs[runs.length - 1]?.end ?? now),
      }),
    );
    return { payload: plan, site: siteRef, dryRun: true };
  }

  /** Plays the schedule: the delivery check's devices, a warning when another node plays on the site, the group told. */
  private async play(msg: NodeMessage, siteRef: string, runs: PlayRun[], start: number): Promise<void> {
    const runtime = this.runtime!;
    await this.verifier?.prepare(siteRef, msg); // the devices, with this message
    const other = runningScheduleFor(runtime, siteRef, Date.now(), this.node);
    if (other)
      this.node.warn(
        `schedule node "${other.name}" also plays a schedule on ${siteRef} until ${formatClock(other.until)}: their requests replace each other's components`,
      );
    this.group.played(runtime, siteRef, runs); // recorded before its first request is claimed
    this.player.play(runs, start);
    this.waitingStatus();
  }
}
