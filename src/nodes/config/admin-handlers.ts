/**
 * What the admin endpoints of admin-routes.ts answer (loaded with the first admin request). `{server}`
 * alone uses the deployed config node as it is. `config` describes a config node being edited; a
 * secret it lacks (or sends as the editor's placeholder) is taken from the deployed node only when
 * `config` sends it to the same place (admin-guard.ts destinationChanges: simulator flag, baseUrl,
 * authType, header name, tokenUrl, TLS); otherwise the request is refused and nothing is sent. POST
 * bodies must be JSON; no file is read for a request; replies carry a short redacted message, never
 * a service's page, and nothing secret.
 */
import {
  builtInSimulatorState,
  type ConfigCredentials,
  type ConfigProps,
  createRuntime,
  isPemText,
  type Runtime,
} from '../../runtime';
import {
  destinationChanges,
  parseBody,
  redactDeep,
  replyError,
  replyMessage,
  RouteError,
  sameCaCert,
  secretForms,
  secretNeeded,
  type RouteBody,
} from './admin-guard';
import type { ConfigNode, RED } from '../shared';

export type Res = { json(v: unknown): void; status(n: number): Res };
export type Req = { body?: unknown; headers?: Record<string, unknown>; params?: Record<string, unknown> };

const SECRET_LABEL: Record<keyof ConfigCredentials, string> = { apiKey: 'API key', clientSecret: 'client secret' };

/** The running `ems-partner-config` node of an id, or null (another node type is never used). */
function deployedNode(RED: RED, id: string | undefined): ConfigNode | null {
  if (!id) return null;
  const node = RED.nodes.getNode(id) as Partial<ConfigNode> | null;
  return node && node.type === 'ems-partner-config' && typeof node.runtime === 'function' && node.props
    ? (node as ConfigNode)
    : null;
}

/** The settings and credentials for a request with `config`, or a RouteError before anything is sent. */
function settingsFor(deployed: ConfigNode | null, config: NonNullable<RouteBody['config']>) {
  const { props, typed } = config;
  const creds: ConfigCredentials = { ...typed };
  const need = secretNeeded(props);
  const stored = deployed?.credentials?.[need ?? ''];
  if (need && !typed[need] && stored) {
    const changed = destinationChanges(deployed!.props, props);
    if (changed.length) {
      throw new RouteError(
        403,
        'stored credentials refused',
        `the stored ${SECRET_LABEL[need]} is used only with the deployed ${changed.join(', ')}; type it to try these settings`,
      );
    }
    creds[need] = stored;
  }
  const ownCa = sameCaCert(deployed?.props, props);
  if (!ownCa && String(props.caCert ?? '').trim() !== '' && !isPemText(props.caCert)) {
    throw new RouteError(
      400,
      'bad caCert',
      'caCert must be PEM text (-----BEGIN CERTIFICATE-----) here; a file path is read only from a deployed config node',
    );
  }
  return { props: { ...props, retries: 0 } as ConfigProps, creds, readFiles: ownCa };
}

/** Every form of every secret the request could touch, for redaction of the reply. */
function formsFor(deployed: ConfigNode | null, body: RouteBody): string[] {
  const stored = deployed?.credentials ?? {};
  return secretForms([stored.apiKey, stored.clientSecret, body.config?.typed.apiKey, body.config?.typed.clientSecret]);
}

async function withRuntime<T>(RED: RED, body: RouteBody, fn: (runtime: Runtime) => Promise<T>): Promise<T> {
  const deployed = deployedNode(RED, body.server);
  if (!body.config) {
    if (!deployed)
      throw new RouteError(502, 'unknown config node', 'unknown config node: deploy it, or send its settings');
    return fn(await deployed.runtime());
  }
  const settings = settingsFor(deployed, body.config);
  const runtime = await createRuntime(settings.props, settings.creds, undefined, { readFiles: settings.readFiles });
  try {
    return await fn(runtime);
  } finally {
    // Not awaited: the reply does not wait for the teardown, and a runtime's close never rejects.
    void runtime.close();
  }
}

/** Parses the body and runs `fn`; answers with its result, or with `onError`'s reply. Never throws. */
function handle(
  RED: RED,
  req: Req,
  res: Res,
  fn: (runtime: Runtime) => Promise<unknown>,
  onError: (err: unknown, msg: { error: string; message: string }) => void,
): void {
  let body: RouteBody = {};
  let forms: string[] = [];
  new Promise<unknown>((resolve) => {
    body = parseBody(req.body);
    forms = formsFor(deployedNode(RED, body.server), body);
    resolve(withRuntime(RED, body, fn));
  })
    .then(
      (v) => res.json(redactDeep(v, forms)),
      (err) => onError(err, { error: replyError(err), message: replyMessage(err, forms) }),
    )
    .catch(() => undefined); // a reply that cannot be sent (socket gone) must not become an unhandled rejection
}

/** The devices or the sites the service lists. */
export function answerList(RED: RED, req: Req, res: Res, what: 'devices' | 'sites'): void {
  handle(
    RED,
    req,
    res,
    (runtime) => (what === 'devices' ? runtime.client.listDevices() : runtime.client.listSites()),
    (err, msg) => res.status(err instanceof RouteError ? err.status : 502).json(msg),
  );
}

/** Connection test: lists the devices, answers with how many. */
export function answerTest(RED: RED, req: Req, res: Res): void {
  handle(
    RED,
    req,
    res,
    async (runtime) => {
      const devices = await runtime.client.listDevices();
      return {
        ok: true,
        message: `connected to ${new URL(runtime.baseUrl).host}: ${devices.length} devices`,
        devices: devices.length,
      };
    },
    (err, msg) => (err instanceof RouteError ? res.status(err.status) : res).json({ ok: false, ...msg }),
  );
}

/** The counts the editor shows next to "Test connection" (after the test's own request) and under the budget settings. */
export function answerStats(RED: RED, req: Req, res: Res): void {
  const id = req.params?.id;
  const node = typeof id === 'string' && id.length <= 100 ? deployedNode(RED, id) : null;
  const stats = node?.budgetStats?.();
  if (!node || !stats) {
    res.status(404).json({
      error: 'unknown config node',
      message: 'no deployed ems-partner-config node with this id (or its settings are unusable)',
    });
    return;
  }
  res.json({ id: node.id, name: typeof node.name === 'string' ? node.name : '', ...stats });
}

/** Whether the built-in simulator runs, and its URL. */
export function answerSimulator(res: Res): void {
  res.json(builtInSimulatorState());
}
