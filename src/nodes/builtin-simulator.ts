/**
 * The built-in simulator: started inside the Node-RED process on a loopback port the
 * first time a config node asks for it, and kept for the life of the process, so its
 * state survives redeploys and every config node on "built-in simulator" shares it.
 */
import type * as Simulator from '../simulator';

let url: Promise<string> | undefined;

export function builtInSimulatorUrl(): Promise<string> {
  if (!url) {
    // Loaded on first use: most Node-RED installs never start the built-in simulator.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startSimulator } = require('../simulator') as typeof Simulator;
    url = startSimulator({ host: '127.0.0.1', port: Number(process.env.EMS_SIM_PORT) || 0 }).then(
      (s: { url: string }) => s.url,
      (err: unknown) => {
        url = undefined;
        throw err;
      },
    );
  }
  return url!;
}
