/**
 * Builds the shared runtime of a config node (client, read coalescer, steering queue,
 * poll scheduler) from its properties and credentials. Also used by the admin routes for
 * a config node that is being edited and not deployed yet.
 */
import fs from 'node:fs';
import { ValidationError, LIMITS, DEFAULT_PATHS, resolvePaths, limited } from '../protocol';
import type { ApiPaths } from '../protocol';
import { checkNoControl, EmsClient, type AuthConfig } from '../client';
import { ReadCoalescer } from './coalescer';
import { PollScheduler } from './poll-scheduler';
import { SteeringQueue } from './steering-queue';
import { builtInSimulatorUrl } from './builtin-simulator';
import { Budget, budgetCaps } from './budget';
import { budgets, type BudgetRegistry } from './budget-registry';
import { checkRedisUrl, Group, SteerGate } from './group';

export interface ConfigProps {
  name?: string;
  baseUrl?: string;
  simulator?: boolean | string;
  authType?: string;
  apiKeyHeader?: string;
  tokenUrl?: string;
  clientId?: string;
  scope?: string;
  timeout?: number | string;
  retries?: number | string;
  concurrency?: number | string;
  rejectUnauthorized?: boolean | string;
  caCert?: string;
  coalesceMs?: number | string;
  /** Largest response body accepted, MB (range and default: LIMITS.maxBodyMB). */
  maxBodyMB?: number | string;
  /** Longest validity of any steering signal, minutes (range and default: LIMITS.maxValidity). */
  maxValidity?: number | string;
  /** The paths the specification does not show (protocol/paths.ts); empty: the default. */
  pathDevices?: string;
  pathSites?: string;
  pathCurtailment?: string;
  pathGridLimits?: string;
  /** A `%` curtailment: converted to W with the site's PV power (default), or sent as `%`. */
  percentCurtailment?: string;
  /** Request budget (budget.ts): attempts in any 60 s / 24 h, 0 = no cap (LIMITS.maxPerMinute, LIMITS.maxPerDay). */
  maxPerMinute?: number | string;
  maxPerDay?: number | string;
  /** At a cap: 'refuse' (default) or 'queue'. */
  budgetMode?: string;
  /** Most messages each node of this config node holds at once; more fail at once (LIMITS.maxWaiting; read by each node). */
  maxWaiting?: number | string;
  /** The group's Redis (redis:// or rediss://, no credentials in it); empty: no group. */
  redisUrl?: string;
}

/** How a `%` curtailment goes out: converted to W (the published type) or as `%`. */
export type PercentCurtailment = 'convert' | 'send';

export function percentCurtailmentOf(p: ConfigProps): PercentCurtailment {
  const value = p.percentCurtailment ?? '';
  if (value === '' || value === 'convert') return 'convert';
  if (value === 'send') return 'send';
  throw new ValidationError(
    'percentCurtailment',
    `must be "convert" (to W with the site's PV power; default) or "send" (unit "%"); got ${JSON.stringify(value)}`,
  );
}

export interface ConfigCredentials {
  apiKey?: string;
  clientSecret?: string;
}

/** The group's credential, apart from the service's (the admin routes never take or send it). */
export interface GroupCredentials {
  redisPassword?: string;
}

export interface Runtime {
  client: EmsClient;
  reads: ReadCoalescer;
  steering: SteeringQueue;
  polls: PollScheduler;
  baseUrl: string;
  /** Limits every node on this config node obeys. */
  limits: { maxValidityMs: number; maxBodyBytes: number };
  /** The paths in use (configured or default). */
  paths: Readonly<ApiPaths>;
  /** How a `%` curtailment goes out. */
  percentCurtailment: PercentCurtailment;
  /** The request budget: counts and caps of every attempt of the client (kept across redeploys by the config node's id). */
  budget: Budget;
  /**
   * The group of instances running this flow on one Redis (a deployed config node with a
   * redisUrl); undefined without one. Made and closed with the runtime. With it, the request
   * budget draws from the group's shared budget, and steering goes out only from the leader of
   * its site (`gate`; the steering queue refuses any other).
   */
  group?: Group;
  /** What steering asks of the group (with `group` only). */
  gate?: SteerGate;
  /** Stops it; resolves once the group (if any) has left: its leases released, so a redeploy hands its sites over at once. */
  close(): Promise<void>;
}

const bool = (v: unknown, dflt: boolean): boolean => (v === undefined || v === '' ? dflt : v === true || v === 'true');
/** A numeric setting of the config node, checked against the table of limits (protocol/limits.ts). */
const setting = (
  p: ConfigProps,
  key: 'timeout' | 'retries' | 'concurrency' | 'coalesceMs' | 'maxBodyMB' | 'maxValidity' | 'maxWaiting',
): number => limited(p[key], LIMITS[key], key);

export function usesSimulator(p: ConfigProps): boolean {
  return bool(p.simulator, false);
}

/** True when a base URL sends keys in clear text to another machine. */
export function isInsecureRemote(baseUrl: string | undefined): boolean {
  if (!baseUrl || !/^http:\/\//i.test(baseUrl)) return false;
  try {
    const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
    return !(host === 'localhost' || host === '::1' || /^127\./.test(host));
  } catch {
    return false;
  }
}

export function authOf(p: ConfigProps, c: ConfigCredentials): AuthConfig {
  const type = p.authType || 'none';
  const key = c.apiKey ?? '';
  switch (type) {
    case 'none':
      return { type: 'none' };
    case 'header':
      if (!key)
        throw new ValidationError('apiKey', 'is required when authType is "header" (set it in the config node)');
      return { type: 'header', apiKey: key, header: p.apiKeyHeader || 'x-api-key' };
    case 'bearer':
      if (!key) throw new ValidationError('apiKey', 'is required as the token when authType is "bearer"');
      return { type: 'bearer', token: key };
    case 'oauth2':
      if (!p.tokenUrl || !p.clientId || !c.clientSecret)
        throw new ValidationError('authType', 'oauth2 needs tokenUrl, clientId and clientSecret');
      return {
        type: 'oauth2',
        tokenUrl: p.tokenUrl,
        clientId: p.clientId,
        clientSecret: c.clientSecret,
        scope: p.scope || undefined,
      };
    default:
      throw new ValidationError('authType', `must be one of none, header, bearer, oauth2; got ${JSON.stringify(type)}`);
  }
}

/** True when a caCert value is PEM text (not a file path). */
export function isPemText(caCert: unknown): boolean {
  return typeof caCert === 'string' && caCert.includes('-----BEGIN');
}

/** PEM text as given, or read from a file path (only for a deployed node's own settings). */
function caOf(caCert: string | undefined, readFiles: boolean): string | undefined {
  const pem = (caCert ?? '').trim();
  if (!pem) return undefined;
  if (isPemText(pem)) return pem;
  if (!readFiles)
    throw new ValidationError(
      'caCert',
      'must be PEM text here (-----BEGIN CERTIFICATE-----); a file path is read only from a deployed config node',
    );
  try {
    return fs.readFileSync(pem, 'utf8');
  } catch {
    throw new ValidationError('caCert', 'must be PEM text or the path of a readable PEM file');
  }
}

/** `readFiles: false` (settings from an admin request): caCert must be PEM text, no file is read. */
export interface RuntimeOptions {
  readFiles?: boolean;
  /**
   * The config node's id: its request budget is taken from the registry (the one it had before a
   * redeploy) and given the caps of these settings. Without it (settings from an admin request)
   * the runtime gets a budget of its own, counted nowhere else.
   */
  budgetId?: string;
  /** The registry (default: the process's `budgets`; tests make their own). */
  budgets?: BudgetRegistry;
}

/**
 * The group's lease time, ms: 15 s, or EMS_GROUP_LEASE_MS (300 to 60000) in the environment of
 * Node-RED. Only tests set it (to see a failover in seconds); a production group keeps 15 s.
 */
export function groupLeaseMs(env: NodeJS.ProcessEnv = process.env): number {
  const lease = Number(env.EMS_GROUP_LEASE_MS);
  return Number.isInteger(lease) && lease >= 300 && lease <= 60_000 ? lease : 15_000;
}

export async function createRuntime(
  p: ConfigProps,
  c: ConfigCredentials & GroupCredentials,
  onPollError?: (e: unknown) => void,
  o: RuntimeOptions = {},
): Promise<Runtime> {
  const sim = usesSimulator(p);
  // Checked before the trim: a line break around the URL is refused like one inside it, not dropped.
  if (!sim) checkNoControl(p.baseUrl, 'baseUrl');
  const baseUrl = sim ? await builtInSimulatorUrl() : (p.baseUrl ?? '').trim();
  if (!baseUrl)
    throw new ValidationError(
      'baseUrl',
      'is required unless "use built-in simulator" is on, e.g. "https://api.example.com/v1"',
    );
  const ca = caOf(p.caCert, o.readFiles ?? true);
  const maxBodyBytes = setting(p, 'maxBodyMB') * 1024 * 1024;
  const maxValidityMs = setting(p, 'maxValidity') * 60_000;
  // Checked either way; the built-in simulator serves the default paths, so it gets those.
  const configured = resolvePaths(p as Record<string, unknown>);
  const paths = sim ? { ...DEFAULT_PATHS } : configured;
  const percentCurtailment = percentCurtailmentOf(p);
  // Read by each node (the scaffold); checked here so a value out of range is reported at deploy.
  setting(p, 'maxWaiting');
  const caps = budgetCaps(p);
  const redisUrl = checkRedisUrl(p.redisUrl);
  const budget = o.budgetId ? (o.budgets ?? budgets).budget(o.budgetId) : new Budget();
  budget.configure(caps);
  const client = new EmsClient({
    baseUrl,
    auth: sim ? { type: 'none' } : authOf(p, c),
    timeoutMs: setting(p, 'timeout'),
    retries: setting(p, 'retries'),
    concurrency: setting(p, 'concurrency'),
    rejectUnauthorized: bool(p.rejectUnauthorized, true),
    ca,
    maxBodyBytes,
    paths,
    attempts: budget,
  });
  // Only a deployed config node (one with an id) joins a group: settings from an admin request never do.
  const group =
    redisUrl && o.budgetId
      ? new Group({
          url: redisUrl,
          password: c.redisPassword,
          groupId: o.budgetId,
          perMinute: caps.maxPerMinute,
          perDay: caps.maxPerDay,
          leaseMs: groupLeaseMs(),
        })
      : undefined;
  const gate = group ? new SteerGate(group) : undefined;
  if (group) budget.share(group.budget);
  const reads = new ReadCoalescer(client, setting(p, 'coalesceMs'));
  // With a group, the queue sends to a site only as its leader (a check at hand, no round trip once led).
  const steering = new SteeringQueue(client, { maxValidityMs, paths, gate: gate && ((site) => gate.lead(site)) });
  const polls = new PollScheduler(onPollError);
  return {
    client,
    reads,
    steering,
    polls,
    baseUrl,
    limits: { maxValidityMs, maxBodyBytes },
    paths,
    percentCurtailment,
    budget,
    group,
    gate,
    close() {
      if (group) budget.unshare(group.budget);
      const left = group ? group.close().catch(() => undefined) : Promise.resolve();
      polls.stop();
      reads.close();
      client.close();
      return left;
    },
  };
}
