/**
 * A recording stand-in for Node-RED and one flow node, shared by the scaffold tests: every step the
 * scaffold takes (createNode, register, status, send, done) goes to `log`.
 */
import type { ConfigNode, UserNode } from '../../../src/nodes/shared/config-node';
import type { Node, RED } from '../../../src/nodes/shared/node-red-api';

/** A stand-in for Node-RED and one node, recording every step in `log`. */
export function standIn(withServer: boolean) {
  const log: string[] = [];
  const statuses: any[] = [];
  const users = new Set<UserNode>();
  let closeHandler: ((removed: boolean, done: () => void) => void) | undefined;
  let inputHandler: ((msg: any, send: any, done: any) => void) | undefined;
  const node = {
    id: 'n',
    type: 'ems-device-read',
    on(ev: string, fn: any) {
      if (ev === 'close') closeHandler = fn;
      if (ev === 'input') inputHandler = fn;
    },
    status(s: any) {
      statuses.push(s);
      log.push(`status ${JSON.stringify(s)}`);
    },
    error(e: any, m?: any) {
      log.push(`error ${e?.message ?? e}${m ? ` msg=${JSON.stringify(m)}` : ''}`);
    },
    warn() {},
    log() {},
    send(m: any) {
      log.push(`node.send ${JSON.stringify(m)}`);
    },
  } as unknown as Node;
  /** Gives the node a message; what it sends and how it ends go to `log` ("send …", "done", "done err …"). */
  const input = (msg: any) =>
    inputHandler!(
      msg,
      (m: any) => log.push(`send ${JSON.stringify(m)}`),
      (err?: Error) => log.push(err ? `done err ${err.message}` : 'done'),
    );
  const server = {
    register(u: UserNode) {
      users.add(u);
      log.push('register');
    },
    deregister(u: UserNode) {
      users.delete(u);
      log.push('deregister');
    },
    runtime: () => Promise.resolve('the runtime' as any),
  } as unknown as ConfigNode;
  let created: any;
  const RED = {
    nodes: {
      createNode(n: any, c: any) {
        created = c;
        log.push(`createNode maxSplit=${c.maxSplit} version=${c.version}`);
      },
      getNode: (id: string) => (withServer && id === 'cfg' ? server : null),
    },
    _: (k: string) => k,
  } as unknown as RED;
  const close = (removed = false) =>
    new Promise<void>((resolve) =>
      closeHandler!(removed, () => {
        log.push('done');
        resolve();
      }),
    );
  return { log, statuses, users, node, RED, close, input, created: () => created };
}

export const SAVED = () => ({ id: 'n', type: 'ems-device-read', server: 'cfg', mode: 'map', version: 1 });
