/**
 * The group's one connection to Redis: built from a redis:// or rediss:// URL that carries no
 * credentials and a password that comes only from the config node's credentials. Bounded:
 * a connect attempt and every command have a deadline, nothing waits in an offline queue (a
 * command while Redis is away fails at once), and reconnecting backs off exponentially with
 * jitter up to a ceiling. Its state is "reachable" only while the socket is ready; every error
 * it hands out has the password and the URL's userinfo removed, and it never logs.
 */
import type { createClient as CreateClient } from 'redis';
import { ValidationError } from '../../protocol';

/**
 * The redis package, loaded only when a group is made: it is an optional peer dependency (about
 * 7 MB installed), so an install without a group neither carries nor loads it.
 */
function redisModule(): { createClient: typeof CreateClient } {
  try {
    return require('redis') as { createClient: typeof CreateClient };
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code !== 'MODULE_NOT_FOUND') throw e;
    throw new ValidationError(
      'redisUrl',
      'is set, but the redis package (node-redis 6) is not installed: install it where this package is installed (in the Node-RED user directory, e.g. ~/.node-red: npm install redis@6) and restart Node-RED, or leave redisUrl empty for no group',
    );
  }
}

/** The clock of everything in the group that acts at given times (tests inject a fake one). */
export interface GroupClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
}

export const systemGroupClock: GroupClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref?.();
    return timer;
  },
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout),
};

export type Reachability = 'connecting' | 'reachable' | 'unreachable' | 'closed';

export interface ConnectionOptions {
  /** redis://host:port[/db] or rediss://… (TLS); no user or password in it (checkRedisUrl). */
  url: string;
  /** From the config node's credentials only. */
  password?: string;
  /** One connect attempt, ms (default 2000). */
  connectTimeoutMs?: number;
  /** One command, ms (default 1000). */
  commandTimeoutMs?: number;
  /** Reconnect backoff: first wait and ceiling, ms (default 100 and 5000). */
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

/** A failure of the group's Redis, its message free of secrets. */
export class GroupError extends Error {
  readonly code = 'EMS_GROUP';
  constructor(message: string) {
    super(message);
    this.name = 'GroupError';
  }
}

/**
 * Checks a redisUrl setting; '' (or only spaces) means no group. Credentials in it are refused:
 * a node property is saved in clear text in flows.json, exported with the flow and shown in the
 * editor, while a credential is stored encrypted apart and never leaves the runtime.
 */
export function checkRedisUrl(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string')
    throw new ValidationError('redisUrl', 'must be a text, e.g. "redis://redis.internal:6379"');
  const trimmed = raw.trim();
  if (!trimmed) return undefined;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new ValidationError('redisUrl', 'must be a URL like "redis://host:6379" or "rediss://host:6380" (TLS)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new ValidationError(
      'redisUrl',
      `must start with redis:// or rediss:// (TLS); got ${JSON.stringify(url.protocol)}`,
    );
  if (url.username || url.password || trimmed.includes('@')) {
    throw new ValidationError(
      'redisUrl',
      'must not carry a user or password (they would be saved in clear text in the flow): put the password in the Redis password field',
    );
  }
  if (!url.hostname) throw new ValidationError('redisUrl', 'needs a host, e.g. "redis://redis.internal:6379"');
  if (url.pathname && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname))
    throw new ValidationError('redisUrl', 'may end in a database number only (e.g. "/2")');
  if (url.search || url.hash) throw new ValidationError('redisUrl', 'takes no query or fragment');
  return trimmed;
}

/** Removes the password and any URL userinfo from a text. */
export function redact(text: string, password?: string): string {
  let out = text.replace(/(rediss?:\/\/)[^@/\s]*@/gi, '$1***@');
  if (password) out = out.split(password).join('***');
  return out;
}

type Client = ReturnType<typeof CreateClient>;

export class GroupConnection {
  private readonly client: Client;
  private state: Reachability = 'connecting';
  private readonly listeners = new Set<(s: Reachability) => void>();
  private readonly password?: string;
  /** Commands sent (tests count round trips with it). */
  commands = 0;
  /** The last failure, redacted. */
  lastError?: string;

  constructor(options: ConnectionOptions) {
    const url = checkRedisUrl(options.url);
    if (!url) throw new ValidationError('redisUrl', 'is required for a group');
    this.password = options.password || undefined;
    const backoffMin = options.backoffMinMs ?? 100;
    const backoffMax = options.backoffMaxMs ?? 5000;
    this.client = redisModule().createClient({
      url,
      password: this.password,
      // RESP3 (HELLO 3, Redis 6 and later): replies keep their types (a hash is a map); fixed here, not left to the client's default
      RESP: 3,
      disableOfflineQueue: true,
      commandOptions: { timeout: options.commandTimeoutMs ?? 1000 },
      socket: {
        connectTimeout: options.connectTimeoutMs ?? 2000,
        reconnectStrategy: (retries) =>
          Math.min(backoffMax, backoffMin * 2 ** Math.min(retries, 16)) * (0.8 + 0.4 * Math.random()),
      },
    });
    // An 'error' without a listener would throw out of the socket; it is kept, redacted, and never logged.
    this.client.on('error', (e: unknown) => {
      this.lastError = this.clean(e);
      if (this.state === 'reachable' || this.state === 'connecting') this.set('unreachable');
    });
    this.client.on('ready', () => this.set('reachable'));
    this.client.on('reconnecting', () => {
      if (this.state !== 'closed') this.set('unreachable');
    });
    this.client.on('end', () => this.set('closed'));
    this.client.connect().catch((e: unknown) => {
      this.lastError = this.clean(e);
      if (this.state !== 'closed') this.set('unreachable');
    });
  }

  get reachability(): Reachability {
    return this.state;
  }

  get reachable(): boolean {
    return this.state === 'reachable';
  }

  /** Calls `fn` on every change of reachability; returns the unsubscribe. */
  onState(fn: (s: Reachability) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Resolves once reachable (or rejects after `ms`). */
  ready(ms = 5000): Promise<void> {
    if (this.reachable) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new GroupError(`Redis not reachable within ${ms} ms${this.lastError ? `: ${this.lastError}` : ''}`));
      }, ms);
      const off = this.onState((state) => {
        if (state !== 'reachable') return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  }

  /** One command; rejects with a GroupError (redacted) when Redis is away or does not answer in time. */
  async command<T = unknown>(args: ReadonlyArray<string>): Promise<T> {
    if (this.state === 'closed') throw new GroupError('group connection closed');
    if (!this.reachable) throw new GroupError(`Redis unreachable${this.lastError ? `: ${this.lastError}` : ''}`);
    this.commands++;
    try {
      return await this.client.sendCommand<T>(args);
    } catch (e) {
      throw new GroupError(this.clean(e));
    }
  }

  /** A Lua script (EVAL): atomic on the server. */
  evalScript<T = unknown>(
    script: string,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<string | number>,
  ): Promise<T> {
    return this.command<T>(['EVAL', script, String(keys.length), ...keys, ...args.map(String)]);
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.set('closed');
    // close() also ends a reconnect loop; it lets replies in flight arrive first
    await this.client.close().catch(() => undefined);
  }

  private clean(e: unknown): string {
    const message = e instanceof Error ? `${e.message}` : String(e);
    return redact(message, this.password);
  }

  private set(next: Reachability): void {
    if (this.state === next || (this.state === 'closed' && next !== 'closed')) return;
    this.state = next;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // a listener's failure must not stop the others or reach the socket
      }
    }
  }
}
