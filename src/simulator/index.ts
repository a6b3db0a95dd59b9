/**
 * Reference simulator of the partner API: programmatic entry point.
 *
 *   const { url, sim, close } = await startSimulator({ seed: 1, frozen: true });
 *   // ... requests against url; sim.clock.advance(3_600_000); ...
 *   await close();
 *
 * Endpoints: see routes.ts (partner API and simulator-only reads) and control.ts (/sim/*).
 */
import type { AddressInfo } from 'node:net';
import { createSimServer } from './server';
import { Simulator, type SimulatorOptions } from './simulator';

export { Clock, type ClockOptions } from './clock';
export { defaultFaults, faultsFromShorthand, normaliseFaults, type FaultConfig } from './faults';
export { LOG_CAPACITY, type LogEntry, type SimStats } from './request-log';
export { createSimServer, type SimServer } from './server';
export {
  BUILT_IN_SITES,
  DEFAULT_SITES,
  EXAMPLE_SITES,
  PROPERTY_UNITS,
  type DeviceKind,
  type LoadProfile,
  type SiteDefinition,
} from './sites';
export { Simulator, type SimulatorOptions } from './simulator';
export { TokenIssuer, type OAuthOptions } from './oauth';

export interface StartOptions extends SimulatorOptions {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: any free port). */
  port?: number;
}

export interface StartedSimulator {
  /** Base URL, e.g. http://127.0.0.1:40123 (no trailing slash, no path prefix). */
  url: string;
  port: number;
  sim: Simulator;
  /** Stops the server, closes keep-alive connections and pending latency timers. */
  close(): Promise<void>;
}

export async function startSimulator(opts: StartOptions = {}): Promise<StartedSimulator> {
  const { host = '127.0.0.1', port = 0, ...simOpts } = opts;
  const sim = new Simulator(simOpts);
  const { server, close } = createSimServer(sim);
  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${actual}`, port: actual, sim, close };
}
