/**
 * The connections of one client and the axios adapter that sends through them: undici (the
 * default; one pool per origin, at most `concurrency` keep-alive connections each) or axios'
 * own http adapter on Node's http agents. The same options mean the same on both: keep-alive,
 * at most `concurrency` connections per origin, the custom CA and rejectUnauthorized, no proxy.
 */
import http from 'node:http';
import https from 'node:https';
import type { AxiosAdapter } from 'axios';
import type { Agent, buildConnector } from 'undici';
import { httpLib } from './http-lib';
import { undiciAdapter } from './undici-adapter';

/** Which adapter sends the requests: 'undici' (default) or axios' own 'http' adapter on Node's http. */
export type HttpAdapterName = 'undici' | 'http';

export interface HttpPoolOptions {
  adapter?: HttpAdapterName;
  concurrency: number;
  rejectUnauthorized: boolean;
  ca?: string;
  /** The attempt's wall-clock deadline, ms: connecting is never cut off sooner (undici's default is 10 s). */
  timeoutMs: number;
  /** The undici adapter ends each attempt at timeoutMs itself (`deadlined`); without, only connecting is bounded. */
  deadline?: boolean;
}

export interface HttpPool {
  readonly name: HttpAdapterName;
  readonly adapter: AxiosAdapter;
  /**
   * The adapter bounds each attempt by the wall-clock deadline (timeoutMs) itself (undici's:
   * one timer in its exchange); otherwise the transport wraps it in withDeadline (deadline.ts).
   */
  readonly deadlined: boolean;
  /** Closes every connection. */
  destroy(): void;
}

/** TCP keep-alive probes every 60 s, as axios sets them on each socket it is given. */
const KEEP_ALIVE_PROBE_MS = 60_000;
/** An idle connection is kept this long when the server names no keep-alive timeout. */
const IDLE_MS = 60_000;

/**
 * undici's Agent and connector alone: the whole package costs about 60 ms more to load, for fetch
 * and WebSocket we do not use. Its main entry, should a release move those files.
 */
export function undiciParts(
  load: (id: string) => unknown = require,
  main: () => typeof import('undici') = () => require('undici'),
): { Agent: typeof Agent; buildConnector: typeof buildConnector } {
  try {
    return {
      Agent: load('undici/lib/dispatcher/agent') as typeof Agent,
      buildConnector: load('undici/lib/core/connect') as typeof buildConnector,
    };
  } catch {
    const undiciMain = main();
    return { Agent: undiciMain.Agent, buildConnector: undiciMain.buildConnector };
  }
}

/**
 * undici's connector with our own connect timeout: one timer per connection, cleared once it is
 * up. (undici's own would start its process-wide clock tick, which outlives the client by up to
 * a second and which fake timers in tests would count.)
 */
export function connector(make: typeof buildConnector, o: HttpPoolOptions): buildConnector.connector {
  const base = make({
    rejectUnauthorized: o.rejectUnauthorized,
    ca: o.ca || undefined,
    timeout: 0,
    keepAlive: true,
    keepAliveInitialDelay: KEEP_ALIVE_PROBE_MS,
  });
  const ms = Math.max(10_000, o.timeoutMs > 0 ? o.timeoutMs : 0);
  return (opts, callback) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (err: Error | null, s: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      (callback as (e: Error | null, s: unknown) => void)(err, s);
    };
    const socket = base(opts, finish as never) as unknown as { destroy(): void } | undefined;
    if (!done) {
      timer = setTimeout(() => {
        socket?.destroy();
        finish(Object.assign(new Error(`connect timed out after ${ms} ms`), { code: 'ETIMEDOUT' }), null);
      }, ms);
    }
    return socket as never;
  };
}

export function createHttpPool(o: HttpPoolOptions): HttpPool {
  const { axios } = httpLib();
  if (o.adapter === 'http') {
    const httpAgent = new http.Agent({
      keepAlive: true,
      keepAliveMsecs: KEEP_ALIVE_PROBE_MS,
      maxSockets: o.concurrency,
    });
    const httpsAgent = new https.Agent({
      keepAlive: true,
      keepAliveMsecs: KEEP_ALIVE_PROBE_MS,
      maxSockets: o.concurrency,
      rejectUnauthorized: o.rejectUnauthorized,
      ca: o.ca || undefined,
    });
    const inner = axios.getAdapter('http');
    return {
      name: 'http',
      deadlined: false,
      // The agents go with every request (not in the instance's defaults, which both adapters share).
      adapter: (config) => {
        config.httpAgent = httpAgent;
        config.httpsAgent = httpsAgent;
        return inner(config);
      },
      destroy: () => {
        httpAgent.destroy();
        httpsAgent.destroy();
      },
    };
  }
  const parts = undiciParts();
  const agent = new parts.Agent({
    connections: o.concurrency,
    keepAliveTimeout: IDLE_MS,
    // The attempt's wall-clock deadline bounds headers and body: no second timer per request.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: connector(parts.buildConnector, o),
  });
  return {
    name: 'undici',
    deadlined: o.deadline === true && o.timeoutMs > 0,
    adapter: undiciAdapter(agent, { version: axios.VERSION, deadlineMs: o.deadline ? o.timeoutMs : 0 }),
    destroy: () => {
      agent.destroy().catch(() => undefined);
    },
  };
}
