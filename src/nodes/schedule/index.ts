/**
 * `ems-schedule`: plays a schedule of time slots on a site. The whole schedule is
 * checked first (protocol/schedule.ts; nothing of a refused one is sent, and a schedule playing
 * goes on); the player (runtime/schedule-player.ts) sends each run at its start through the
 * config node's SteeringQueue, with one timer. The schedule and what was sent are kept in the
 * node's context (property `store`), so a redeploy or, with a file-backed store, a restart
 * resumes at the slot in progress without sending anything twice. Output 1: one message per
 * request sent; output 2, with `verify` on: a delivery report per slot (nodes/verify.ts).
 * The player's timer and the checks' deadlines share one SharedClock: one timer per node.
 */
import {
  formatClock,
  noLimitWarning,
  parseSlots,
  POWER_LIMIT_KEYS,
  resolvePaths,
  runsOf,
  validateReference,
  ValidationError,
} from '../../protocol';
import {
  clearRunningSchedule,
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
  checkSiteRatings,
  evaluate,
  fail,
  flowNode,
  maxValidityMsOf,
  type Node,
  type NodeMessage,
  type RED,
} from '../shared';
import {
  STATE_KEY,
  convertSlots,
  describeNext,
  describeRun,
  planOf,
  restoreState,
  savedForm,
  settingsOf,
  type NodeSettings,
} from './support';
import { keepUnread, readStored, type Store, text, where } from './stored';
import { ScheduleVerify } from './verify';
import { ScheduleGroup } from './group';

type Props = Record<string, unknown> & { server: string; site?: string; siteType?: string; name?: string };
type ContextNode = Node & { context(): Store };

/**
 * The state a node hands to its successor on a redeploy, per runtime and node id: Node-RED
 * deletes a node's context when it closes unless settings.js configures a context store.
 */
const handover = new WeakMap<object, Map<string, { state: PlayerState; store?: string; held?: string }>>();

/** How long a closing node waits for a request under way, so what was sent is saved. */
const CLOSE_WAIT_MS = 5_000;
const TYPE_NAME: Record<string, string> = {
  asset: 'asset steering',
  'grid-target': 'grid target',
  'grid-limits': 'grid limits',
};

export = function (RED: RED): void {
  function EmsScheduleNode(this: ContextNode, saved: Props) {
    const f = flowNode(RED, this, saved);
    const { props: config, server, status } = f;
    const node = this;
    const t = status.t;
    let settings: NodeSettings | undefined;
    let settingsError: unknown;
    try {
      settings = settingsOf(config);
      // A limit turned off (a flow saved before limits were on by default): said once, at deploy.
      const unlimited = noLimitWarning(settings.none, POWER_LIMIT_KEYS);
      if (unlimited) node.warn(unlimited);
    } catch (e) {
      settingsError = e;
      fail(f, undefined, e);
    }
    const store = settings?.store || undefined;
    const stores = (RED as RED & { settings?: { contextStorage?: Record<string, unknown> } }).settings?.contextStorage;
    if (store && !(stores && store in stores))
      node.warn(
        `context store "${store}" is not configured (settings.js contextStorage): the schedule is kept in the default store and does not survive a restart of Node-RED`,
      );
    const label = String(config.name || node.id);
    let rt: Runtime | undefined;
    const clock = new SharedClock(deliveryClock()); // the node's one timer
    const verifier = settings?.verify
      ? new ScheduleVerify({
          RED,
          node,
          config,
          status,
          signal: f.signal,
          settings: settings.check,
          clock,
          runtime: () => (rt ? Promise.resolve(rt) : f.runtime()),
          pvPeakPower: () => settings!.pvPeakPower,
        })
      : undefined;
    const check = verifier ?? noDeliveryCheck();
    (node as ContextNode & { delivery?: ScheduleVerify }).delivery = verifier; // tests, diagnostics

    const player = new SchedulePlayer({
      now: () => clock.now(),
      timers: clock,
      // In a group each request is claimed first: it goes out once, from the leader of the site.
      submit: async (cmd) => {
        await group.claim(rt!, cmd);
        return rt!.steering.submit(cmd, { owner: node });
      },
      sent: (run, cmd, result) => sent(run, cmd, result),
      failed: (run, cmd, err) => {
        if (f.signal.aborted) return;
        // Standby, or sent by the group already: not a failure (the status says who steers).
        if (isNotSteering(err) && err.reason !== 'unreachable') return status.error(err);
        node.error(err, { payload: null, slots: slotsOf(run), site: run.site, command: cmd });
        status.error(err);
      },
      skipped: (run, reason) => {
        node.warn(`${describeRun(run, t)} not sent: ${reason}`);
        status.sentWarning(t('skipped', { slot: run.first + 1, total: run.total }));
      },
      done: () => status.ended(t('done')),
      changed: (state) => changed(state),
    });

    const group = new ScheduleGroup({ id: node.id, player, status });
    const slotsOf = (run: PlayRun) => run.slots.map((s) => s.index);
    function sent(run: PlayRun, cmd: SteeringCommand, r: SteeringResult): void {
      check.sent(run, cmd, r);
      if (f.signal.aborted) return;
      node.send([{ payload: r.response, request: r.request, slots: slotsOf(run), site: run.site }, null]);
      const text = describeRun(run, t);
      if (!r.displaced) return status.sent(text);
      const ended = r.displaced
        .map((d) => `the ${TYPE_NAME[d.type]} this Node-RED had in force until ${formatClock(d.validUntil)}`)
        .join(' and ');
      node.warn(`${text}: the service ends ${ended} (asset steering and grid target cannot be used together)`);
      status.sentWarning(
        t('displacing', {
          text,
          other: [
            ...new Set(r.displaced.map((d) => t(d.type === 'asset' ? 'assetSteering' : 'gridTargetSteering'))),
          ].join(', '),
        }),
      );
    }

    // Saving: the latest state, one write at a time (a write under way is followed by the latest one).
    let latest: PlayerState | undefined;
    let writing: Promise<void> = Promise.resolve();
    let dirty = false;
    /** Why nothing may be written to the node's key: it holds a value that could not be read, and it could not be kept elsewhere. */
    let held: string | undefined;
    let heldWarned = false;
    function changed(state: PlayerState): void {
      if (rt)
        setRunningSchedule(
          rt,
          node,
          label,
          player.active ? [...state.runs, ...(player.current ? [player.current] : [])] : [],
        );
      latest = state;
      if (dirty) return;
      dirty = true;
      writing = writing.then(
        () =>
          new Promise<void>((resolve) => {
            dirty = false;
            if (held) {
              if (!heldWarned) node.warn(`schedule not saved: ${held}`);
              heldWarned = true;
              return resolve();
            }
            try {
              node.context().set(STATE_KEY, savedForm(latest!, Date.now()), store, (err) => {
                if (err)
                  node.warn(
                    `schedule not saved in context store ${store ?? 'default'}: ${err instanceof Error ? err.message : String(err)}`,
                  );
                resolve();
              });
            } catch (err) {
              node.warn(`schedule not saved: ${(err as Error).message}`);
              resolve();
            }
          }),
      );
    }

    function notResumed(e: unknown, kept: string): Error {
      return e instanceof ValidationError
        ? new ValidationError('stored schedule', `not resumed: ${e.message}${kept}`, e.kind)
        : new Error(`stored schedule not resumed: ${text(e)}${kept}`);
    }

    /** Keeps a stored value that could not be read (stored.ts), in turn with the saves: before anything is written over it. */
    function keep(value: unknown, err: unknown): Promise<string> {
      const done = writing
        .then(() => keepUnread(node.context(), store, value, err, Date.now()))
        .then((k) => {
          held ??= k.held;
          return k.text;
        });
      writing = done.then(() => undefined);
      return done;
    }

    /** Resumes the saved schedule (redeploy, restart): at the slot in progress, nothing twice; what cannot be read is kept. */
    async function resume(): Promise<void> {
      const handed = handover.get(RED)?.get(node.id);
      handover.get(RED)?.delete(node.id);
      if (handed && handed.store === store) held = handed.held; // the store still holds what it could not read, nor keep elsewhere
      if (settingsError || !server) return;
      let raw: unknown;
      try {
        raw = handed ? savedForm(handed.state, Date.now()) : await readStored(node.context(), store);
      } catch (e) {
        held = `${where(STATE_KEY, store)} could not be read (${text(e)}); nothing is written over it until it can`;
        throw notResumed(e, `; ${held}`);
      }
      if (raw === undefined || raw === null) return;
      try {
        rt = await f.runtime();
      } catch (e) {
        throw notResumed(e, '');
      }
      let state: PlayerState;
      let dropped: unknown;
      try {
        state = restoreState(raw, settings!, rt.limits.maxValidityMs, (e) => {
          dropped = e;
        });
      } catch (e) {
        const kept = await keep(raw, e);
        if (!held) changed({ runs: [] }); // kept elsewhere: the node's key is free for the next schedule
        throw notResumed(e, kept);
      }
      if (dropped)
        node.warn(`stored schedule: the run in force was left out: ${text(dropped)}${await keep(raw, dropped)}`);
      group.resumed(rt, state.runs, state.inForce);
      const passed = player.resume(state);
      if (passed > 0)
        node.warn(`schedule resumed: ${passed} run(s) ended while the node was stopped and were not sent`);
      waitingStatus();
    }
    const ready = resume().catch((err) => fail(f, undefined, err));

    function waitingStatus(): void {
      const cur = player.current;
      const next = player.pending[0];
      if (player.wasStopped) status.ended(cur ? t('stoppedUntil', { time: formatClock(cur.end) }) : t('stopped'));
      else if (cur && (!next || next.start > Date.now())) status.sent(describeRun(cur, t));
      else if (next) status.ended(describeNext(next, t));
    }

    async function site(msg: NodeMessage): Promise<string> {
      if (msg.site !== undefined) return validateReference(msg.site, 'msg.site');
      return validateReference(await evaluate(RED, node, config.site ?? '', config.siteType, msg), 'site');
    }

    // Messages are handled in arrival order: a stop after a schedule stops that schedule. A dry
    // run's plan goes out from output 1; a schedule played sends nothing now (the player does).
    f.onInput(
      async (msg, { copy }) => {
        await ready;
        if (settingsError) throw settingsError;
        const s = settings!;
        if (msg.payload === 'stop' || msg.stop === true) {
          player.stop();
          group.stopped();
          waitingStatus();
          return undefined;
        }
        const cfg = f.configNode(); // throws, naming `server`, when there is none
        const ref = await site(msg);
        if (!s.dryRun) rt = await f.runtime();
        const maxValidityMs = rt && !s.dryRun ? rt.limits.maxValidityMs : maxValidityMsOf(cfg.props?.maxValidity);
        const now = Date.now();
        const at = Array.isArray(msg.payload) ? 'msg.payload' : 'msg.payload.slots';
        const runtime = () => (rt ? Promise.resolve(rt) : f.runtime());
        const sites = async () => {
          const r = await runtime();
          return cachedSites(r, () => r.client.listSites());
        };
        const slots = await convertSlots(parseSlots(msg.payload, s, now), ref, at, s, {
          mode: rt ? rt.percentCurtailment : percentCurtailmentOf(cfg.props),
          msg: msg.pvPeakPower,
          sites,
        });
        // A limit not set is the site's rating: every slot within it, or nothing of the schedule is
        // played (a dry run reads nothing: the rating is checked when the schedule is played).
        for (const slot of s.dryRun ? [] : slots) {
          await checkSiteRatings(
            slot.setting,
            s.rating,
            ref,
            { sites, pvW: s.pvPeakPower, pvFrom: "the node's pvPeakPower" },
            (part) =>
              `${at}[${slot.index}].${part === 'upperLimit' ? 'gridLimits.upper' : part === 'lowerLimit' ? 'gridLimits.lower' : part}`,
          );
        }
        const runs: PlayRun[] = runsOf(slots, maxValidityMs, Date.now()).map((r) => ({
          ...r,
          site: ref,
          total: slots.length,
        }));
        if (s.dryRun) {
          const plan = planOf(runs, Date.now(), resolvePaths(cfg.props as Record<string, unknown>));
          status.dryRun(
            t('dryRun', {
              count: plan.length,
              from: formatClock(plan[0]?.at ?? now),
              until: formatClock(runs[runs.length - 1]?.end ?? now),
            }),
          );
          return copy({ payload: plan, site: ref, dryRun: true });
        }
        await verifier?.prepare(ref, msg); // the devices, with this message
        const other = runningScheduleFor(rt!, ref, Date.now(), node);
        if (other)
          node.warn(
            `schedule node "${other.name}" also plays a schedule on ${ref} until ${formatClock(other.until)}: their requests replace each other's components`,
          );
        group.played(rt!, ref, runs); // recorded before its first request is claimed
        player.play(runs, slots[0].start);
        waitingStatus();
        return undefined;
      },
      { ordered: true },
    );

    f.onClose(async (removed) => {
      check.close();
      group.close();
      clock.close();
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
      });
      // A request under way is awaited (bounded), so the next start knows it was sent.
      await Promise.race([player.close().then(() => writing), bound]);
      clearTimeout(timer);
      if (!removed) {
        if (!handover.has(RED)) handover.set(RED, new Map());
        handover.get(RED)!.set(node.id, { state: player.state(), store, held });
      }
      if (!rt) return;
      clearRunningSchedule(rt, node);
      const dropped = rt.steering.dropOwner(node, 'node closed or redeployed');
      if (dropped.length) node.warn(`steering not sent (node closed): ${dropped.join('; ')}`);
    });
  }

  RED.nodes.registerType('ems-schedule', EmsScheduleNode);
};
