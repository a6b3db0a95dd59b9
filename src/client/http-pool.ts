/**
 * The connections of one client and the axios adapter that sends through them: undici (the
 * default; one pool per origin, at most `concurrency` keep-alive connections each) or axios'
 * own http adapter on Node's http agents. The same options mean the same on both: keep-alive,
 * at most `concurrency` connections per origin, the custom CA and rejectUnauthorized, no proxy.
 */
import http from 'node:http';
import https from 'node:https';
import type { AxiosAdapter } from 'axios';
import type { Agent } from 'undici';
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
}

export interface HttpPool {
  readonly name: HttpAdapterName;
  readonly adapter: AxiosAdapter;
  /** Closes every connection. */
  destroy(): void;
}

/** TCP keep-alive probes every 60 s, as axios sets them on each socket it is given. */
const KEEP_ALIVE_PROBE_MS = 60_000;
/** An idle connection is kept this long when the server names no keep-alive timeout. */
const IDLE_MS = 60_000;

/** undici's Agent alone: the whole package costs about 60 ms more to load, for fetch and WebSocket we do not use. */
function undiciAgent(): typeof Agent {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('undici/lib/dispatcher/agent') as typeof Agent;
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('undici') as typeof import('undici')).Agent;
  }
}

export function createHttpPool(o: HttpPoolOptions): HttpPool {
  const { axios } = httpLib();
  if (o.adapter === 'http') {
    const httpAgent = new http.Agent({ keepAlive: true, keepAliveMsecs: KEEP_ALIVE_PROBE_MS, maxSockets: o.concurrency });
    const httpsAgent = new https.Agent({ keepAlive: true, keepAliveMsecs: KEEP_ALIVE_PROBE_MS, maxSockets: o.concurrency, rejectUnauthorized: o.rejectUnauthorized, ca: o.ca || undefined });
    const inner = axios.getAdapter('http');
    return {
      name: 'http',
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
  const AgentClass = undiciAgent();
  const agent = new AgentClass({
    connections: o.concurrency,
    keepAliveTimeout: IDLE_MS,
    // The attempt's wall-clock deadline bounds headers and body: no second timer per request.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: {
      rejectUnauthorized: o.rejectUnauthorized,
      ca: o.ca || undefined,
      timeout: Math.max(10_000, o.timeoutMs > 0 ? o.timeoutMs : 0),
      keepAlive: true,
      keepAliveInitialDelay: KEEP_ALIVE_PROBE_MS,
    },
  });
  return {
    name: 'undici',
    adapter: undiciAdapter(agent, { version: axios.VERSION }),
    destroy: () => {
      agent.destroy().catch(() => undefined);
    },
  };
}
