/**
 * The built-in simulator: started inside the Node-RED process on a loopback port the
 * first time a config node asks for it, and kept for the life of the process, so its
 * state survives redeploys and every config node on "built-in simulator" shares it.
 * When it starts, its URL is logged once (`[ems-partner] built-in simulator at <url>`);
 * the editor shows it through the admin route `GET ems-partner/simulator`.
 */
import type * as Simulator from '../simulator';

let url: Promise<string> | undefined;
let started: string | null = null;
let log: ((text: string) => void) | undefined;

/** Where the start of the simulator is reported (the config node passes RED.log.info). */
export function setSimulatorLog(fn: (text: string) => void): void {
  log = fn;
}

/** Whether the built-in simulator runs, and its URL; does not start it. */
export function builtInSimulatorState(): { running: boolean; url: string | null } {
  return { running: started !== null, url: started };
}

export function builtInSimulatorUrl(): Promise<string> {
  if (!url) {
    // Loaded on first use: most Node-RED installs never start the built-in simulator.
    const { startSimulator, BUILT_IN_SITES } = require('../simulator') as typeof Simulator;
    // The default sites and one site per shipped example that steers (simulator/sites.ts).
    url = startSimulator({
      host: '127.0.0.1',
      port: Number(process.env.EMS_SIM_PORT) || 0,
      sites: [...BUILT_IN_SITES],
    }).then(
      (s: { url: string }) => {
        started = s.url;
        try {
          log?.(`[ems-partner] built-in simulator at ${s.url}`);
        } catch {
          /* a logger's failure must not stop the simulator */
        }
        return s.url;
      },
      (err: unknown) => {
        url = undefined;
        throw err;
      },
    );
  }
  return url!;
}
