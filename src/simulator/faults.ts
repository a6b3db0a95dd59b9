/**
 * Fault injection: 500, 503 and 429 responses, connection resets and added latency, decided
 * per request from a seeded PRNG before the request is applied (a faulted steering request
 * changes nothing). Never applies to the /sim/* control endpoints.
 */
import { ValidationError, show } from '../protocol';
import { mulberry32 } from './prng';

export interface FaultConfig {
  /** Probability of a 500 response, 0-1. */
  rate500: number;
  /** Probability of a 503 response (with Retry-After), 0-1. */
  rate503: number;
  /** Probability of a 429 response (with Retry-After), 0-1. */
  rate429: number;
  /** Retry-After of 429 and 503 responses, seconds. */
  retryAfterSeconds: number;
  /** Probability that the socket is destroyed without a response, 0-1. */
  resetRate: number;
  /** Added latency per request, uniformly drawn from [min, max] ms. */
  latencyMs: [number, number];
}

type FaultKind = 'none' | '500' | '503' | '429' | 'reset';

export interface FaultDecision {
  kind: FaultKind;
  delayMs: number;
}

export function defaultFaults(): FaultConfig {
  return { rate500: 0, rate503: 0, rate429: 0, retryAfterSeconds: 1, resetRate: 0, latencyMs: [0, 0] };
}

/**
 * The CLI's `--fault-rate f` and `--latency ms` as a fault config:
 * rate500 = f/2, rate429 = f/4, resetRate = f/4; latency [ms, ms].
 */
export function faultsFromShorthand(faultRate?: number, latencyMs?: number): Partial<FaultConfig> {
  const out: Partial<FaultConfig> = {};
  if (faultRate !== undefined && faultRate > 0) {
    out.rate500 = faultRate / 2;
    out.rate429 = faultRate / 4;
    out.resetRate = faultRate / 4;
  }
  if (latencyMs !== undefined && latencyMs > 0) out.latencyMs = [latencyMs, latencyMs];
  return out;
}

function rate(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) {
    throw new ValidationError(field, `must be a number from 0 to 1; got ${show(v)}`);
  }
  return v;
}

function nonNegative(v: unknown, field: string, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > max) {
    throw new ValidationError(field, `must be a number from 0 to ${max}; got ${show(v)}`);
  }
  return v;
}

/** A complete fault config from a partial one; missing fields take the defaults (no faults). */
export function normaliseFaults(input: unknown): FaultConfig {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new ValidationError('body', `must be a fault config object; got ${show(input)}`);
  }
  const record = input as Record<string, unknown>;
  const known = ['rate500', 'rate503', 'rate429', 'retryAfterSeconds', 'resetRate', 'latencyMs'];
  for (const k of Object.keys(record)) {
    if (!known.includes(k)) throw new ValidationError(k, `is not a fault setting; accepted: ${known.join(', ')}`);
  }
  const out = defaultFaults();
  if (record.rate500 !== undefined) out.rate500 = rate(record.rate500, 'rate500');
  if (record.rate503 !== undefined) out.rate503 = rate(record.rate503, 'rate503');
  if (record.rate429 !== undefined) out.rate429 = rate(record.rate429, 'rate429');
  if (record.resetRate !== undefined) out.resetRate = rate(record.resetRate, 'resetRate');
  if (record.retryAfterSeconds !== undefined)
    out.retryAfterSeconds = Math.round(nonNegative(record.retryAfterSeconds, 'retryAfterSeconds', 86_400));
  if (record.latencyMs !== undefined) {
    const latency = record.latencyMs;
    if (typeof latency === 'number') {
      const ms = nonNegative(latency, 'latencyMs', 60_000);
      out.latencyMs = [ms, ms];
    } else if (Array.isArray(latency) && latency.length === 2) {
      const min = nonNegative(latency[0], 'latencyMs[0]', 60_000);
      const max = nonNegative(latency[1], 'latencyMs[1]', 60_000);
      if (max < min) throw new ValidationError('latencyMs', 'must be [min, max] with min <= max');
      out.latencyMs = [min, max];
    } else {
      throw new ValidationError('latencyMs', `must be [min, max] in ms or one number; got ${show(latency)}`);
    }
  }
  return out;
}

export class FaultInjector {
  private cfg: FaultConfig = defaultFaults();
  private next: () => number;
  /** True when any fault or latency is configured; false keeps requests on the fast path. */
  active = false;

  constructor(seed: number, cfg?: Partial<FaultConfig>) {
    this.next = mulberry32((seed ^ 0x5eed) >>> 0);
    if (cfg) this.set(cfg);
  }

  get config(): FaultConfig {
    return { ...this.cfg, latencyMs: [...this.cfg.latencyMs] as [number, number] };
  }

  /** Replaces the whole config (missing fields: no faults). Throws a ValidationError if invalid. */
  set(cfg: Partial<FaultConfig>): FaultConfig {
    this.cfg = normaliseFaults(cfg);
    const faults = this.cfg;
    this.active = faults.rate500 + faults.rate503 + faults.rate429 + faults.resetRate > 0 || faults.latencyMs[1] > 0;
    return this.config;
  }

  /** Decides the fate of one request. One draw for the fault, one for the latency if any. */
  decide(): FaultDecision {
    const faults = this.cfg;
    let kind: FaultKind = 'none';
    if (faults.rate500 + faults.rate503 + faults.rate429 + faults.resetRate > 0) {
      const draw = this.next();
      let edge = faults.rate500;
      if (draw < edge) kind = '500';
      else if (draw < (edge += faults.rate503)) kind = '503';
      else if (draw < (edge += faults.rate429)) kind = '429';
      else if (draw < edge + faults.resetRate) kind = 'reset';
    }
    let delayMs = 0;
    const [min, max] = faults.latencyMs;
    if (max > 0) delayMs = min + Math.floor(this.next() * (max - min + 1));
    if (delayMs > max) delayMs = max;
    return { kind, delayMs };
  }
}
