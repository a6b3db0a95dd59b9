/**
 * The built-in simulator: started inside the Node-RED process on a loopback port the
 * first time a config node asks for it, and kept for the life of the process, so its
 * state survives redeploys and every config node on "built-in simulator" shares it.
 */
import { startSimulator } from '../simulator';

let url: Promise<string> | undefined;

export function builtInSimulatorUrl(): Promise<string> {
  if (!url) {
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
