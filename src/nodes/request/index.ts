/**
 * `ems-request`: a raw request to an endpoint the package does not wrap yet, through the
 * config node's client (its authentication, retries, limits and redaction; EmsClient.raw).
 * `msg.method`, `msg.path` and `msg.body` say what to send; the node's `method` and `path`
 * are the defaults when the message does not set them. The path is relative to the base URL:
 * a form that could leave it is refused before anything is sent (client/request-path.ts).
 *
 * A 2xx answer is the output (payload, statusCode, selected headers). Any other answer, and
 * every failure, ends the message in one Catch-able error; for an HTTP answer the message that
 * reaches the Catch node also carries its statusCode, headers and payload.
 *
 * Mode `stats` sends nothing: any input gives msg.payload = the config node's request
 * budget, its counts per last minute, hour and day and its caps (runtime/budget.ts), for a dashboard.
 */
import { checkRequestMethod, checkRequestPath, rawAnswerOf, type RawResponse } from '../../client';
import { fail, flowNode, type Node, type NodeMessage, type RED } from '../shared';
import { ValidationError } from '../../protocol';

interface Props {
  server: string;
  name?: string;
  /** Method when msg.method is not set: GET (default), POST, PUT, PATCH or DELETE. */
  method?: string;
  /** Path when msg.path is not set ('' = msg.path is required). */
  path?: string;
  /** 'request' (default: the raw request) or 'stats' (the config node's request counts and caps). */
  mode?: string;
}

/** The node's mode; a flow saved without one sends requests, as before. */
function modeOf(v: unknown): 'request' | 'stats' {
  if (v === undefined || v === null || v === '' || v === 'request') return 'request';
  if (v === 'stats') return 'stats';
  throw new ValidationError(
    'mode',
    `must be "request" (default: send msg.method to msg.path) or "stats" (output the config node's request counts and caps); got ${JSON.stringify(v)}`,
  );
}

/** The fields of an answer as they go on a message. */
function answerFields(a: RawResponse): NodeMessage {
  return { payload: a.payload, statusCode: a.statusCode, headers: a.headers };
}

export = function (RED: RED): void {
  function EmsRequestNode(this: Node, saved: Props) {
    const f = flowNode(RED, this, saved);
    const { props: config, status } = f;
    // The node's own defaults are checked once, at deploy (a bad one is reported, and refused again per message that uses it).
    try {
      if (modeOf(config.mode) === 'request') {
        checkRequestMethod(config.method || 'GET', 'method');
        if (config.path) checkRequestPath(config.path, 'path');
      }
    } catch (err) {
      fail(f, undefined, err);
    }

    async function request(msg: NodeMessage): Promise<{ method: string; answer: RawResponse }> {
      const fromMsg = (k: 'method' | 'path') => msg[k] !== undefined && msg[k] !== null && msg[k] !== '';
      const [method, methodField] = fromMsg('method') ? [msg.method, 'msg.method'] : [config.method || 'GET', 'method'];
      const [path, pathField] = fromMsg('path')
        ? [msg.path, 'msg.path']
        : [config.path || msg.path, config.path ? 'path' : 'msg.path'];
      const server = f.configNode();
      const m = checkRequestMethod(method, methodField);
      checkRequestPath(path, pathField); // the form, before the runtime is awaited; the client checks it again against the base URL
      const rt = await server.runtime();
      try {
        const answer = await rt.client.raw(m, path, msg.body, {
          signal: f.signal,
          fields: { method: methodField, path: pathField, body: 'msg.body' },
        });
        return { method: m, answer };
      } catch (err) {
        // An HTTP error answer: the message that reaches the Catch node carries it too.
        const a = rawAnswerOf(err);
        if (a) Object.assign(msg, answerFields(a));
        throw err;
      }
    }

    /** Mode stats: the budget of the config node, nothing sent. */
    async function stats(): Promise<unknown> {
      modeOf(config.mode); // a bad mode is refused again per message
      return (await f.runtime()).budget.stats();
    }

    f.onInput(async (msg, { copy }) => {
      if (config.mode && config.mode !== 'request') {
        const payload = await stats();
        const p = payload as { lastMinute: { sent: number }; lastDay: { sent: number } };
        status.ok(status.t('stats', { minute: p.lastMinute.sent, day: p.lastDay.sent }));
        return copy({ payload });
      }
      status.busy();
      const r = await request(msg);
      status.ok(status.t('answered', { method: r.method, status: r.answer.statusCode }));
      return copy(answerFields(r.answer));
    });
  }

  RED.nodes.registerType('ems-request', EmsRequestNode);
};
