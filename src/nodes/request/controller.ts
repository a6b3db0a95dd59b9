/**
 * What an `ems-request` node does with a message (index.ts wires it): a raw request through the
 * config node's client, or, in mode `stats`, the config node's request budget.
 */
import { checkRequestMethod, checkRequestPath, rawAnswerOf, type RawResponse } from '../../client';
import { ValidationError } from '../../protocol';
import { type Answer, fail, type FlowNode, type InputContext, type NodeMessage } from '../shared';

export interface RequestProps {
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
function answerFields(answer: RawResponse): NodeMessage {
  return { payload: answer.payload, statusCode: answer.statusCode, headers: answer.headers };
}

export class RequestController {
  private readonly config: RequestProps;

  constructor(private readonly flow: FlowNode<RequestProps>) {
    this.config = flow.props;
    // The node's own defaults are checked once, at deploy (a bad one is reported, and refused again per message that uses it).
    try {
      if (modeOf(this.config.mode) === 'request') {
        checkRequestMethod(this.config.method || 'GET', 'method');
        if (this.config.path) checkRequestPath(this.config.path, 'path');
      }
    } catch (err) {
      fail(flow, undefined, err);
    }
  }

  async onInput(msg: NodeMessage, { copy }: InputContext): Promise<Answer> {
    const { status } = this.flow;
    if (this.config.mode && this.config.mode !== 'request') {
      const payload = await this.stats();
      const counts = payload as { lastMinute: { sent: number }; lastDay: { sent: number } };
      status.ok(status.t('stats', { minute: counts.lastMinute.sent, day: counts.lastDay.sent }));
      return copy({ payload });
    }
    status.busy();
    const result = await this.request(msg);
    status.ok(status.t('answered', { method: result.method, status: result.answer.statusCode }));
    return copy(answerFields(result.answer));
  }

  private async request(msg: NodeMessage): Promise<{ method: string; answer: RawResponse }> {
    const config = this.config;
    const fromMsg = (k: 'method' | 'path') => msg[k] !== undefined && msg[k] !== null && msg[k] !== '';
    const [method, methodField] = fromMsg('method') ? [msg.method, 'msg.method'] : [config.method || 'GET', 'method'];
    const [path, pathField] = fromMsg('path')
      ? [msg.path, 'msg.path']
      : [config.path || msg.path, config.path ? 'path' : 'msg.path'];
    const server = this.flow.configNode();
    const checked = checkRequestMethod(method, methodField);
    checkRequestPath(path, pathField); // the form, before the runtime is awaited; the client checks it again against the base URL
    const runtime = await server.runtime();
    try {
      const answer = await runtime.client.raw(checked, path, msg.body, {
        signal: this.flow.signal,
        fields: { method: methodField, path: pathField, body: 'msg.body' },
      });
      return { method: checked, answer };
    } catch (err) {
      // An HTTP error answer: the message that reaches the Catch node carries it too.
      const answer = rawAnswerOf(err);
      if (answer) Object.assign(msg, answerFields(answer));
      throw err;
    }
  }

  /** Mode stats: the budget of the config node, nothing sent. */
  private async stats(): Promise<unknown> {
    modeOf(this.config.mode); // a bad mode is refused again per message
    return (await this.flow.runtime()).budget.stats();
  }
}
