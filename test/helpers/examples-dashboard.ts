/**
 * Loading a shipped example that has a Dashboard 2 page (example 09) into the test runtime:
 * as loadExample() does (the EMS config node on the test's simulator), with the dashboard's
 * own node modules (@flowfuse/node-red-dashboard, a devDependency that npm start uses too), so
 * its widgets run for real: a chart stores the points a browser would be sent, a table its
 * rows (`dashboardData(id)`). Nodes are found by name, or by id (widgets have labels, no names).
 */
import path from 'node:path';
import { CORE_NODES, forTest, loadFlow, readExample, type LoadedExample } from './examples';
import { helper, Inbox, NODES, StatusLog } from './red';

const DASHBOARD_DIR = path.dirname(require.resolve('@flowfuse/node-red-dashboard/package.json'));
const DASHBOARD_TYPES: Record<string, string> = require('@flowfuse/node-red-dashboard/package.json')['node-red'].nodes;

/** The dashboard's node modules for the ui-* types the flow uses (config nodes included). */
export function dashboardModules(flow: any[]): unknown[] {
  const types = new Set(flow.map((n) => n.type).filter((t) => t.startsWith('ui-')));
  return [...types].map((t) => {
    const file = DASHBOARD_TYPES[t];
    if (!file) throw new Error(`no Dashboard 2 node type ${t}`);
    return require(path.join(DASHBOARD_DIR, file));
  });
}

/** What a dashboard widget holds for the browser (the chart's points as messages, the table's last message). */
export function dashboardData(id: string): any {
  return require(path.join(DASHBOARD_DIR, 'nodes', 'store', 'data.js')).get(id);
}

export interface LoadedDashboardExample extends LoadedExample {
  /** The runtime node of this id. */
  byId(id: string): any;
}

/** Loads examples/<file> with its dashboard, the EMS config node on `simUrl` (and `config`'s settings). */
export async function loadDashboardExample(
  file: string,
  simUrl: string,
  config: Record<string, unknown> = {},
): Promise<LoadedDashboardExample> {
  const shipped = readExample(file);
  const flow = forTest(shipped, simUrl).map((n) => (n.type === 'ems-partner-config' ? { ...n, ...config } : n));
  await loadFlow([...NODES, ...CORE_NODES, ...dashboardModules(shipped)], flow);
  const byId = (id: string) => {
    const node = helper.getNode(id);
    if (!node) throw new Error(`${file}: node ${id} did not start`);
    return node;
  };
  const byName = (name: string) => {
    const found = shipped.filter((n) => n.name === name);
    if (found.length !== 1) throw new Error(`${file}: ${found.length} nodes named ${JSON.stringify(name)}`);
    return byId(found[0].id);
  };
  return {
    nodes: shipped,
    node: byName,
    byId,
    inbox: (name) => new Inbox(byName(name)),
    status: (name) => new StatusLog(byName(name)),
    fire: (name, msg = {}) => byName(name).receive(msg),
  };
}
