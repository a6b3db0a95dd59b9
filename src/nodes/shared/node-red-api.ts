/**
 * The small part of the Node-RED runtime API these adapters use, typed here so the
 * package needs no @types/node-red at run time.
 */
export interface NodeMessage {
  _msgid?: string;
  payload?: unknown;
  topic?: string;
  [key: string]: unknown;
}

/**
 * Any function Node-RED takes as it is: a node's constructor (called with the node as `this`),
 * an admin route's handlers. Narrower than `Function`: it cannot be called without a cast.
 */
type RuntimeFunction = (this: never, ...args: never[]) => unknown;

export type SendFn = (msg: NodeMessage | Array<NodeMessage | NodeMessage[] | null>) => void;
export type DoneFn = (err?: Error) => void;

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'dot' | 'ring';
  text?: string;
}

export interface Node {
  id: string;
  type: string;
  name?: string;
  credentials?: Record<string, string | undefined>;
  on(event: 'input', fn: (msg: NodeMessage, send: SendFn, done: DoneFn) => void): void;
  on(event: 'close', fn: (removed: boolean, done: () => void) => void): void;
  send: SendFn;
  status(s: NodeStatus | Record<string, never>): void;
  error(err: unknown, msg?: NodeMessage): void;
  warn(text: unknown): void;
  log(text: unknown): void;
}

export interface RED {
  nodes: {
    createNode(node: object, config: object): void;
    registerType(
      type: string,
      ctor: RuntimeFunction,
      opts?: { credentials?: Record<string, { type: string }>; settings?: object },
    ): void;
    getNode(id: string): unknown;
    getCredentials(id: string): Record<string, string> | undefined;
  };
  util: {
    evaluateNodeProperty(
      value: unknown,
      type: string,
      node: Node,
      msg: NodeMessage,
      cb: (err: Error | null, v: unknown) => void,
    ): void;
    cloneMessage<T>(msg: T): T;
  };
  httpAdmin: {
    post(path: string, ...handlers: RuntimeFunction[]): void;
    get(path: string, ...handlers: RuntimeFunction[]): void;
  };
  auth: { needsPermission(permission: string): (req: unknown, res: unknown, next: () => void) => void };
  log: { warn(text: string): void; info(text: string): void };
  _(key: string, subs?: Record<string, unknown>): string;
}
