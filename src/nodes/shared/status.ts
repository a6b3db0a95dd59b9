/**
 * The status of a flow node (HA-websocket's Status, for this package): one object owns the
 * colour, shape, text and time of what a node shows; nodes never build status objects.
 * Texts come from the `status.*` keys of the locale catalogs (src/nodes/<node>/locales/<lang>/<type>.json)
 * through Node-RED's RED._, so they follow the runtime's language; numbers and times are
 * parameters (`__power__`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ValidationError, formatClock } from '../../protocol';
import { ApiError, BudgetError } from '../../client';
import { isNotSteering } from '../../runtime';
import { isUnreachable, seconds } from './poll-backoff';
import type { Node, NodeStatus, RED } from './node-red-api';

export type Params = Record<string, string | number>;
/** A text of one node type's `status.*` keys, e.g. t('devices', { count: 6 }). */
export type Translate = (key: string, params?: Params) => string;

/**
 * The node type whose catalog holds the texts every node shares (requesting, no server configured,
 * connection states, failure reasons): `ems-partner-config.status.*`.
 */
const SHARED = 'ems-partner-config';

const catalogs = new Map<string, Record<string, string>>();

/**
 * The en-US `status` texts of a node type, read once from its catalog; used where RED._ has no
 * catalog (e.g. node-red-node-test-helper), so en-US texts are the same everywhere.
 */
function englishCatalog(type: string): Record<string, string> {
  const known = catalogs.get(type);
  if (known) return known;
  let texts: Record<string, string> = {};
  // Next to the compiled nodes (dist/nodes/locales, assembled by the build), or in the node's folder (tsx).
  const nodesDir = path.join(__dirname, '..');
  const folders = fs.existsSync(path.join(nodesDir, 'locales')) ? [] : fs.readdirSync(nodesDir);
  for (const dir of [nodesDir, ...folders.map((folder) => path.join(nodesDir, folder))]) {
    try {
      const file = path.join(dir, 'locales', 'en-US', `${type}.json`);
      texts = JSON.parse(fs.readFileSync(file, 'utf8'))[type]?.status ?? {};
      break;
    } catch {
      /* the next place */
    }
  }
  catalogs.set(type, texts);
  return texts;
}

/** A text split at its `__name__` placeholders: literal, name, literal, ..., literal. */
const compiled = new Map<string, string[]>();

/** Fills `__name__` placeholders (Node-RED's i18n syntax) with the parameters (each text is split once). */
function fill(text: string, params?: Params): string {
  if (!params) return text;
  let parts = compiled.get(text);
  if (!parts) {
    parts = text.split(/__(\w+)__/);
    if (compiled.size < 1000) compiled.set(text, parts);
  }
  let out = parts[0];
  for (let i = 1; i < parts.length; i += 2) {
    const value = params[parts[i]];
    out += (value !== undefined ? String(value) : `__${parts[i]}__`) + parts[i + 1];
  }
  return out;
}

/** The en-US texts of a node type (also the fallback of `translator`). */
export function english(type: string): Translate {
  return (key, params) => fill(englishCatalog(type)[key] ?? `${type}.status.${key}`, params);
}

/**
 * The texts of a node type in the runtime's language (settings `lang`, else the environment's):
 * RED._ of that node's module, else en-US.
 * Each key's text is asked of RED._ once, without parameters (Node-RED's i18next leaves the
 * `__name__` placeholders of a text it is given no values for as they are), and filled here;
 * the runtime's language does not change while it runs.
 */
export function translator(RED: Pick<RED, '_'>, type: string): Translate {
  const fallback = english(type);
  const texts = new Map<string, string | null>();
  return (key, params) => {
    let text = texts.get(key);
    if (text === undefined) {
      const full = `${type}.status.${key}`;
      let answer: unknown;
      try {
        answer = RED._(full);
      } catch {
        answer = undefined;
      }
      // A missing catalog answers with the key (Node-RED prefixes it with its namespace).
      text =
        typeof answer === 'string' && answer !== '' && answer !== full && !answer.endsWith(`:${full}`) ? answer : null;
      texts.set(key, text);
    }
    return text === null ? fallback(key, params) : fill(text, params);
  };
}

let shared: Translate = english(SHARED);

/** Takes the shared texts from the config node's module (called once as it loads). */
export function useSharedTexts(RED: Pick<RED, '_'>): void {
  shared = translator(RED, SHARED);
}

/** Client error codes with a text of their own (others show their code, e.g. ECONNREFUSED). */
const CODE_KEY: Record<string, string> = {
  EMS_BAD_RESPONSE: 'badAnswer',
  EMS_TOO_LARGE: 'tooLarge',
  ETIMEDOUT: 'timedOut',
};

/** A short reason for a red status ring (at most 40 characters). */
function shortReason(err: unknown): string {
  let text: string;
  if (err instanceof ValidationError) text = shared('badField', { field: err.field });
  else if (err instanceof BudgetError) text = shared('budgetReached', { cap: String(err.field ?? '') });
  else if (err instanceof ApiError)
    text = err.status
      ? `HTTP ${err.status}${err.serviceMessage ? ` ${err.serviceMessage}` : ''}`
      : CODE_KEY[err.code]
        ? shared(CODE_KEY[err.code])
        : err.code;
  else text = err instanceof Error ? err.message : String(err);
  return cut(text, 40);
}

/**
 * Rounds a value for a status text: String(Math.round(v * 100) / 100), made from the whole hundredths (String of a
 * fraction is V8's slow shortest-digits conversion). Below 1e13 the two agree digit for digit; beyond, String's.
 */
export function fmt(v: unknown): string {
  if (typeof v !== 'number') return String(v);
  const hundredths = Math.round(v * 100);
  if (!(Math.abs(hundredths) < 1e15) || hundredths % 100 === 0) return String(hundredths / 100);
  const abs = Math.abs(hundredths);
  const whole = Math.floor(abs / 100);
  const cents = abs - whole * 100;
  const decimals = cents < 10 ? `0${cents}` : cents % 10 === 0 ? `${cents / 10}` : `${cents}`;
  return `${hundredths < 0 ? '-' : ''}${whole}.${decimals}`;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The timers a Status uses to show a held result (injected in tests). */
export interface StatusTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

const TIMERS: StatusTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** The longest a result held back while a node's messages overlap waits before it shows. */
export const HOLD_MS = 1000;

export class Status {
  private closed = false;
  /** A result held back while other messages of the node were under way (later): shows it, its text made then. */
  private held?: () => void;
  /** Shows the held result at the latest HOLD_MS after it was first held. */
  private holdTimer?: unknown;
  /** What `verdict` adds to the statuses of what was sent or ended (the delivery check's last verdict). */
  private note?: string;
  /** The last status of what was sent or ended, without the note (shown again, with it, when the note changes). */
  private base?: NodeStatus;
  /** The request budget's warning while it holds, e.g. "budget 85 % of maxPerDay". */
  private budgetNote?: string;
  /** The last status shown, as the node asked for it (before the budget's warning was added). */
  private last: NodeStatus | Record<string, never> = {};
  /** Messages refused at the waiting limit since deploy: counted on every later status ("· 12 dropped"). */
  private drops = 0;
  /** Requests of this node the request budget refused since deploy: counted on its red ring. */
  private budgetRefusals = 0;

  /** `node`: whose status this is; `t`: the node type's texts (`translator(RED, type)`). */
  constructor(
    private readonly node: Pick<Node, 'status'>,
    readonly t: Translate,
    private readonly now: () => number = Date.now,
    private readonly timers: StatusTimers = TIMERS,
  ) {}

  private show(s: NodeStatus | Record<string, never>): void {
    if (this.closed) return;
    if (this.held) this.dropHeld();
    this.last = s;
    const shown = this.budgetNote ? this.withBudget(s) : s;
    this.node.status(this.drops > 0 ? this.withDrops(shown) : shown);
  }

  /** A status with the count of messages refused at the waiting limit added to its text. */
  private withDrops(s: NodeStatus | Record<string, never>): NodeStatus {
    const note = shared('droppedCount', { count: this.drops });
    const st = s as NodeStatus;
    if (!st.text) return { fill: st.fill ?? 'yellow', shape: st.shape ?? 'ring', text: note };
    return { ...st, text: `${st.text} · ${note}` };
  }

  /**
   * A message refused because `limit` messages were waiting already: a red ring counting every
   * refusal since deploy ("12 dropped: 10000 waiting"); later statuses carry the count.
   */
  dropped(limit: number): void {
    this.drops++;
    if (this.closed) return;
    this.last = {};
    this.node.status({ fill: 'red', shape: 'ring', text: shared('dropped', { count: this.drops, limit }) });
  }

  /**
   * While the budget's warning holds, a green or blue status (a result, requesting) turns into a
   * yellow ring that carries it; red (a failure) and grey stay as they are; no status at all
   * shows the warning alone.
   */
  private withBudget(s: NodeStatus | Record<string, never>): NodeStatus | Record<string, never> {
    const note = this.budgetNote!;
    if (!('text' in s) && !('fill' in s)) return { fill: 'yellow', shape: 'ring', text: note };
    const st = s as NodeStatus;
    if (st.fill !== 'green' && st.fill !== 'blue') return s;
    return { fill: 'yellow', shape: 'ring', text: st.text ? `${st.text} · ${note}` : note };
  }

  /**
   * The config node's request budget: at 80 % of a cap or more (`w`), every status carries a
   * warning, e.g. a yellow ring "budget 85 % of maxPerDay"; null ends it (the last status shows
   * again as it was).
   */
  budget(w: { cap: string; percent: number } | null): void {
    const note = w ? shared('budget', { percent: w.percent, cap: w.cap }) : undefined;
    if (note === this.budgetNote) return;
    this.budgetNote = note;
    this.show(this.last);
  }

  /** A status of what was sent or ended, with the note of the last verdict when there is one. */
  private showNoted(s: NodeStatus): void {
    this.show(this.note ? { ...s, text: `${s.text} · ${this.note}` } : s);
    this.base = s;
  }

  /**
   * The delivery check's last verdict, e.g. "last: partly (−32 kW)": from now on added to what
   * was sent or ended ("sent ESS −50 kW until 14:15 · last: partly (−32 kW)"), and shown at
   * once with the last such status (over any other status: a failed message went to Catch).
   */
  verdict(note: string): void {
    this.note = note;
    if (this.base) this.showNoted(this.base);
  }

  /** Blue dot while a request is under way ("requesting", or what is being sent). */
  busy(text = shared('requesting')): void {
    this.show({ fill: 'blue', shape: 'dot', text });
  }

  /** Green dot: a result and when it came, e.g. "soc 50 % · 14:07" (at most 60 characters). */
  ok(text: string, at = this.now()): void {
    this.show({ fill: 'green', shape: 'dot', text: cut(shared('at', { text, time: formatClock(at) }), 60) });
  }

  /**
   * A result while other messages of the node are still under way: held back (`show` makes its
   * text only when it runs) and shown when they have ended (`release`), or at the latest HOLD_MS
   * after the first result held, so a node answering thousands of overlapping messages a second
   * shows its latest result about once a second, not thousands of times. Any other status
   * replaces the held one. okLater: a green dot whose time is when it shows.
   */
  later(show: () => void): void {
    if (this.closed) return;
    this.held = show;
    this.holdTimer ??= this.timers.setTimeout(() => {
      this.holdTimer = undefined;
      this.release();
    }, HOLD_MS);
  }

  okLater(text: () => string): void {
    this.later(() => this.ok(text()));
  }

  /** Shows the result held back by later/okLater, if there is one. */
  release(): void {
    this.held?.();
  }

  private dropHeld(): void {
    this.held = undefined;
    if (this.holdTimer !== undefined) this.timers.clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
  }

  /** Green dot: what was sent, as given (it names its own end, e.g. "ESS −50 kW until 14:15"). */
  sent(text: string): void {
    this.showNoted({ fill: 'green', shape: 'dot', text });
  }

  /** Yellow dot: what was sent, with a warning about it (e.g. it ends another steering type). */
  sentWarning(text: string): void {
    this.showNoted({ fill: 'yellow', shape: 'dot', text });
  }

  /** Grey dot: what a dry run would have sent. */
  dryRun(text: string): void {
    this.show({ fill: 'grey', shape: 'dot', text });
  }

  /** Grey ring: something ended (stopped, cancelled, lifted, expired). */
  ended(text: string): void {
    this.showNoted({ fill: 'grey', shape: 'ring', text });
  }

  /** Red ring: why the last message or poll failed (a budget refusal with this node's count of them, "budget: maxPerDay reached · 7 refused"). */
  error(err: unknown): void {
    if (isNotSteering(err)) {
      if (err.reason === 'standby') this.standby(err.leader ?? '?', err.site);
      else if (err.reason === 'unreachable') this.redisUnreachable();
      return;
    }
    if (err instanceof BudgetError) {
      this.budgetRefusals++;
      this.failing(cut(shared('budgetRefused', { cap: String(err.field ?? ''), count: this.budgetRefusals }), 48));
      return;
    }
    this.failing(shortReason(err));
  }

  /** Grey ring: another instance of the group leads the site, this one sends nothing ("standby: nr-2 steers site-A"). */
  standby(leader: string, site: string): void {
    this.show({ fill: 'grey', shape: 'ring', text: cut(shared('standby', { leader, site }), 60) });
  }

  /** Grey ring: this instance took the lead of a site in its group (what it sends next shows as usual). */
  leading(site: string): void {
    this.show({ fill: 'grey', shape: 'ring', text: cut(shared('leading', { site }), 60) });
  }

  /** Red ring: the group's Redis cannot be reached, so this instance cannot prove it leads and steers nothing. */
  redisUnreachable(): void {
    this.show({ fill: 'red', shape: 'ring', text: shared('redisUnreachable') });
  }

  /** Red ring with a text of the node's own. */
  failing(text: string): void {
    this.show({ fill: 'red', shape: 'ring', text });
  }

  /** Red ring of a failing poller that backs off, e.g. "unreachable, next try in 40 s". */
  backingOff(err: unknown, nextInMs: number): void {
    const code = (err as { code?: unknown } | null)?.code;
    const reason = isUnreachable(err)
      ? shared('unreachable')
      : code === 'EMS_BAD_RESPONSE'
        ? shared('badAnswer')
        : code === 'EMS_TOO_LARGE'
          ? shared('tooLarge')
          : shortReason(err).slice(0, 28);
    this.failing(shared('backoff', { reason, wait: seconds(nextInMs) }));
  }

  /** Red ring: the node has no config node. */
  noServer(): void {
    this.failing(shared('noServer'));
  }

  /** The part of the config node's connection state worth showing; nothing while all is well. */
  connection(s: { state: string; until?: number; reason?: string }): void {
    if (s.state === 'rate-limited' && s.until)
      this.show({
        fill: 'yellow',
        shape: 'ring',
        text: shared('rateLimited', { time: new Date(s.until).toLocaleTimeString() }),
      });
    else if (s.state === 'error') this.failing(s.reason ?? shared('connectionError'));
  }

  clear(): void {
    this.show({});
  }

  /** Clears the status; nothing shows after this (a late answer must not paint a redeployed node). */
  close(): void {
    this.dropHeld();
    this.budgetNote = undefined;
    this.drops = 0;
    this.clear();
    this.closed = true;
  }
}
