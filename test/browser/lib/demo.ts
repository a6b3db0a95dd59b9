/**
 * `npm start` (scripts/start-demo.js) for the browser tests: on any free port of 127.0.0.1,
 * with its own user directory under .test-tmp/, the built-in simulator on a port picked
 * here and its MQTT broker on any free port (never 1883); stopped by its PID (SIGTERM, which
 * start-demo passes on to Node-RED).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { start } from '../../helpers/spawned';
import { REPO, TMP, freePort } from './node-red';

export const DEMO_SCRIPT = path.join(REPO, 'scripts', 'start-demo.js');

export interface Demo {
  /** e.g. http://127.0.0.1:41234 (no trailing slash). */
  base: string;
  simUrl: string;
  /** The port of npm start's MQTT broker on 127.0.0.1. */
  mqttPort: number;
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

export async function startDemo(timeoutMs = 60000): Promise<Demo> {
  fs.mkdirSync(TMP, { recursive: true });
  const userDir = fs.mkdtempSync(path.join(TMP, 'browser-demo-'));
  const simPort = await freePort();
  const child = start(process.execPath, [DEMO_SCRIPT], {
    cwd: REPO,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      EMS_DEMO_USERDIR: userDir,
      EMS_SIM_PORT: String(simPort),
      EMS_MQTT_PORT: '0',
      TZ: 'UTC',
    },
  });
  async function stop() {
    await child.stop('SIGTERM', 15000);
    if (!process.env.EMS_KEEP_TMP) fs.rmSync(userDir, { recursive: true, force: true });
  }
  try {
    const match = await child.waitFor(/Dashboard: (http:\/\/127\.0\.0\.1:\d+)\/dashboard/, timeoutMs);
    const mqtt = await child.waitFor(/MQTT broker: mqtt:\/\/127\.0\.0\.1:(\d+)/, 5000);
    return {
      base: match[1],
      simUrl: `http://127.0.0.1:${simPort}`,
      mqttPort: Number(mqtt[1]),
      pid: child.child.pid!,
      output: child.output,
      stop,
    };
  } catch (err) {
    await stop();
    throw new Error(`npm start did not get ready: ${(err as Error).message}`, { cause: err });
  }
}
