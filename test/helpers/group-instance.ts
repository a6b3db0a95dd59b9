/**
 * One Node-RED instance of a group, in a child process of its own (test/acceptance/group/instances.test.ts):
 * a real Node-RED runtime (node-red-node-test-helper, this package's nodes from the worktree)
 * running the flow the parent sends over IPC. It reports every message its helper nodes get
 * and every status its nodes show, and feeds messages into nodes when asked. The parent kills
 * it with SIGKILL to see a failover; nothing here cleans up after that.
 */
import { helper, NODES } from './red';

type In =
  | { type: 'load'; flow: object[]; credentials: Record<string, object>; watch: string[]; statuses: string[] }
  | { type: 'input'; node: string; msgs: object[] }
  | { type: 'stop' };

const send = (m: object) => {
  if (process.connected) process.send!(m);
};
const plain = (v: unknown) => JSON.parse(JSON.stringify(v ?? null));

process.on('message', (m: In) => {
  void handle(m).catch((e) => send({ type: 'fatal', message: String(e?.stack ?? e) }));
});

async function handle(m: In): Promise<void> {
  if (m.type === 'load') {
    await new Promise<void>((resolve, reject) => helper.startServer((e?: Error) => (e ? reject(e) : resolve())));
    await helper.load(NODES, m.flow, m.credentials);
    for (const id of m.watch)
      helper.getNode(id).on('input', (msg: any) =>
        send({
          type: 'out',
          node: id,
          msg: plain({ ...msg, error: msg.error && { message: msg.error.message, code: msg.error.code } }),
        }),
      );
    for (const id of m.statuses)
      helper
        .getNode(id)
        .on('call:status', (c: { args: any[] }) => send({ type: 'status', node: id, status: plain(c.args[0]) }));
    const instances: Record<string, string> = {};
    for (const n of m.flow as any[]) {
      if (n.type !== 'ems-partner-config') continue;
      const rt = await helper.getNode(n.id).runtime();
      instances[n.id] = rt.group?.instanceId;
      // a member of the group (connected, one heartbeat answered) before the parent goes on
      await rt.group?.connection.ready(10_000);
      await rt.group?.members.beat();
    }
    send({ type: 'ready', instances });
  } else if (m.type === 'input') {
    const node = helper.getNode(m.node);
    for (const msg of m.msgs) node.receive(msg);
  } else if (m.type === 'stop') {
    await helper.unload();
    process.exit(0);
  }
}
