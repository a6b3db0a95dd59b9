/**
 * Admin endpoints for the editor (registered once, protected by Node-RED's admin
 * permissions, called with relative URLs so httpAdminRoot keeps working). What they answer,
 * and how a request's settings and secrets are checked: admin-handlers.ts and admin-guard.ts,
 * loaded with the first admin request (with the runtime, code.ts), not when Node-RED registers the node.
 */
import type { RED } from '../shared';
import type * as Guard from './admin-guard';
import type * as Handlers from './admin-handlers';
import type { Req, Res } from './admin-handlers';
import { configCode } from './code';

/** Apps the routes are on (a WeakSet: a test runtime brings a new admin app each time). */
const registered = new WeakSet<object>();

type Next = () => void;

export function registerAdminRoutes(RED: RED): void {
  if (registered.has(RED.httpAdmin)) return;
  registered.add(RED.httpAdmin);
  const guard = () => require('./admin-guard') as typeof Guard;
  const handlers = () => {
    configCode(RED);
    return require('./admin-handlers') as typeof Handlers;
  };
  const read = RED.auth.needsPermission('ems-partner-config.read');
  const write = RED.auth.needsPermission('ems-partner-config.write');
  const jsonOnly = (req: Req, res: Res, next: Next) => guard().jsonOnly(req, res, next);
  // Unsaved settings need write permission; a deployed node by id needs read.
  const readOrWrite = (req: Req, res: Res, next: Next) => (guard().hasConfig(req.body) ? write : read)(req, res, next);

  // {server} (read) | {server?, config} (write) -> normalised devices
  RED.httpAdmin.post('/ems-partner/devices', jsonOnly, readOrWrite, (req: Req, res: Res) =>
    handlers().answerList(RED, req, res, 'devices'),
  );
  // {server} (read) | {server?, config} (write) -> sites (the simulator lists them; [] otherwise)
  RED.httpAdmin.post('/ems-partner/sites', jsonOnly, readOrWrite, (req: Req, res: Res) =>
    handlers().answerList(RED, req, res, 'sites'),
  );
  // {server, config?} (write) -> {ok, message, devices?}
  RED.httpAdmin.post('/ems-partner/test', jsonOnly, write, (req: Req, res: Res) =>
    handlers().answerTest(RED, req, res),
  );
  // (read) -> the deployed config node's request budget (counts per last minute, hour, day; caps; no secret)
  RED.httpAdmin.get('/ems-partner/stats/:id', read, (req: Req, res: Res) => handlers().answerStats(RED, req, res));
  // (read) -> {running, url}
  RED.httpAdmin.get('/ems-partner/simulator', read, (_req: Req, res: Res) => handlers().answerSimulator(res));
}
