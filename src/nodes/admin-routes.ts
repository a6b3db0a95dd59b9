/**
 * Admin endpoints for the editor (registered once, protected by Node-RED's admin
 * permissions, called with relative URLs so httpAdminRoot keeps working):
 *   POST ems-partner/devices  {server, config?} -> normalised devices
 *   POST ems-partner/sites    {server, config?} -> sites (the simulator lists them; [] otherwise)
 *   POST ems-partner/test     {server, config?} -> {ok, message, devices?}
 * `config` describes a config node that is being edited; credentials it lacks (or sent as
 * the editor's placeholder) are taken from the deployed node. Nothing secret is returned.
 */
import { createRuntime, type ConfigCredentials, type ConfigProps, type Runtime } from './runtime';
import { shortReason } from './common';
import type { RED } from './red';
import type { ConfigNode } from './config-node';

/** Apps the routes are on (a WeakSet: a test runtime brings a new admin app each time). */
const registered = new WeakSet<object>();

interface Body {
  server?: string;
  config?: ConfigProps & ConfigCredentials;
}

const PLACEHOLDER = '__PWRD__';

async function withRuntime<T>(RED: RED, body: Body, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const id = typeof body.server === 'string' ? body.server : undefined;
  const deployed = id ? (RED.nodes.getNode(id) as ConfigNode | null) : null;
  if (!body.config && deployed) return fn(await deployed.runtime());
  if (!body.config) throw new Error('unknown config node: deploy it, or send its settings');
  const stored = (id && RED.nodes.getCredentials(id)) || {};
  const pick = (k: 'apiKey' | 'clientSecret') => {
    const v = body.config?.[k];
    return typeof v === 'string' && v !== '' && v !== PLACEHOLDER ? v : stored[k];
  };
  const rt = await createRuntime({ ...body.config, retries: 0 }, { apiKey: pick('apiKey'), clientSecret: pick('clientSecret') });
  try {
    return await fn(rt);
  } finally {
    rt.close();
  }
}

export function registerAdminRoutes(RED: RED): void {
  if (registered.has(RED.httpAdmin)) return;
  registered.add(RED.httpAdmin);
  const read = RED.auth.needsPermission('ems-partner-config.read');
  const write = RED.auth.needsPermission('ems-partner-config.write');
  type Res = { json(v: unknown): void; status(n: number): Res };
  const route = (path: string, perm: Function, fn: (rt: Runtime) => Promise<unknown>) =>
    RED.httpAdmin.post(path, perm, (req: { body?: Body }, res: Res) => {
      withRuntime(RED, req.body ?? {}, fn).then(
        (v) => res.json(v),
        (err) => res.status(502).json({ error: shortReason(err), message: err instanceof Error ? err.message : String(err) }),
      );
    });
  route('/ems-partner/devices', read, (rt) => rt.client.listDevices());
  route('/ems-partner/sites', read, (rt) => rt.client.listSites());
  RED.httpAdmin.post('/ems-partner/test', write, (req: { body?: Body }, res: Res) => {
    withRuntime(RED, req.body ?? {}, async (rt) => {
      const devices = await rt.client.listDevices();
      return { ok: true, message: `connected to ${new URL(rt.baseUrl).host}: ${devices.length} devices`, devices: devices.length };
    }).then(
      (v) => res.json(v),
      (err) => res.json({ ok: false, message: err instanceof Error ? err.message : String(err) }),
    );
  });
}
