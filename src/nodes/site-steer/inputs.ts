/**
 * What a message asks of `ems-site-steer`, read from the message and the node's TypedInputs:
 * the site and the values of the node's fields. An evaluation that Node-RED answers at once
 * (msg, str, num, env, a memory context) is used at once: a message steering one site waits
 * for no extra promise; one that answers later (JSONata, a persistent context) is awaited.
 */
import { validateReference } from '../../protocol';
import type { Node, NodeMessage, NodeValues, RED } from '../shared';
import type { SteerMode } from '../shared';

/** A TypedInput's value: at once when Node-RED answers synchronously, else a promise; a failure throws or rejects. */
function evaluateNow(
  RED: RED,
  node: Node,
  value: unknown,
  type: string | undefined,
  msg: NodeMessage,
): unknown | Promise<unknown> {
  let answered = false;
  let failure: unknown;
  let result: unknown;
  let later: { resolve(v: unknown): void; reject(e: unknown): void } | undefined;
  RED.util.evaluateNodeProperty(value, type || 'str', node, msg, (err, v) => {
    if (later) return err ? later.reject(err) : later.resolve(v);
    answered = true;
    [failure, result] = [err, v];
  });
  if (!answered) return new Promise((resolve, reject) => (later = { resolve, reject }));
  if (failure) throw failure;
  return result;
}

type FieldName = 'ess' | 'curtailment' | 'gridTarget' | 'upperLimit' | 'lowerLimit';

/** Per mode, the node's TypedInputs it evaluates, in this order: [value, property]. */
const FIELDS: Record<SteerMode, ReadonlyArray<readonly [FieldName, string]>> = {
  ess: [['ess', 'essValue']],
  portfolio: [['ess', 'essValue']],
  curtailment: [['curtailment', 'curtailmentValue']],
  combined: [
    ['ess', 'essValue'],
    ['curtailment', 'curtailmentValue'],
  ],
  'grid-target': [['gridTarget', 'gridTargetValue']],
  'grid-limits': [
    ['upperLimit', 'upperLimitValue'],
    ['lowerLimit', 'lowerLimitValue'],
  ],
};

/** The node's properties the inputs are read from. */
type Config = Record<string, unknown> & { site?: string; siteType?: string };

export class SteerInputs {
  constructor(
    private readonly RED: RED,
    private readonly node: Node,
    private readonly config: Config,
  ) {}

  /** The site a message steers: msg.site, else the node's `site` TypedInput (validated, naming its field). */
  site(msg: NodeMessage): string | Promise<string> {
    if (msg.site !== undefined) return validateReference(msg.site, 'msg.site');
    const ref = evaluateNow(this.RED, this.node, this.config.site ?? '', this.config.siteType, msg);
    return ref instanceof Promise ? ref.then((r) => validateReference(r, 'site')) : validateReference(ref, 'site');
  }

  /** The field a refusal of the site names. */
  siteField(msg: NodeMessage): string {
    return msg.site !== undefined ? 'msg.site' : 'site';
  }

  /** The values of the node's fields the mode uses, evaluated in order against `msg` ('' / unset: undefined). */
  values(mode: SteerMode, msg: NodeMessage): NodeValues | Promise<NodeValues> {
    const keys = FIELDS[mode];
    const found: Partial<Record<FieldName, unknown>> = {};
    for (let i = 0; i < keys.length; i++) {
      const [name, key] = keys[i];
      const value = this.field(key, msg);
      if (value instanceof Promise) return this.valuesLater(mode, msg, found, i, value);
      found[name] = value;
    }
    return this.valuesOf(mode, msg, found);
  }

  /** The rest of values() once an evaluation answers later: one at a time, in the same order. */
  private async valuesLater(
    mode: SteerMode,
    msg: NodeMessage,
    found: Partial<Record<FieldName, unknown>>,
    from: number,
    pending: Promise<unknown>,
  ): Promise<NodeValues> {
    const keys = FIELDS[mode];
    found[keys[from][0]] = await pending;
    for (let i = from + 1; i < keys.length; i++) found[keys[i][0]] = await this.field(keys[i][1], msg);
    return this.valuesOf(mode, msg, found);
  }

  private valuesOf(mode: SteerMode, msg: NodeMessage, found: Partial<Record<FieldName, unknown>>): NodeValues {
    const deadband = this.config.deadbandValue;
    return {
      ess: found.ess,
      curtailment: found.curtailment,
      gridTarget: found.gridTarget,
      deadband: mode === 'grid-target' && deadband !== '' && deadband !== undefined ? Number(deadband) : undefined,
      upperLimit: found.upperLimit,
      lowerLimit: found.lowerLimit,
      msgMaximizeGridImport: msg.maximizeGridImport,
      msgValidUntil: msg.validUntil,
      msgValidFrom: msg.validFrom,
    };
  }

  /** One of the node's TypedInputs, against `msg` (undefined when not set). */
  private field(key: string, msg: NodeMessage): unknown | Promise<unknown> {
    const value = this.config[key];
    if (value === undefined || value === '') return undefined;
    return evaluateNow(this.RED, this.node, value, String(this.config[`${key}Type`] ?? 'num'), msg);
  }
}
