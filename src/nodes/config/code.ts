/**
 * The config node's code past its registration (the runtime, the client, the protocol, the shared
 * node code), loaded on first use: the first config node made, the first admin request, or flows
 * starting that hold a node of this package. A Node-RED whose flows use none of it does not load it
 * at start-up. Each Node-RED runtime (RED) is bound once: the shared status texts come from its
 * catalog, and the built-in simulator's start is logged through it.
 */
import type * as Runtime from '../../runtime';
import type * as Shared from '../shared';
import type { RED } from '../shared';

/** The runtimes already bound (a test brings a new RED each time). */
const bound = new WeakSet<object>();

interface ConfigCode {
  runtime: typeof Runtime;
  shared: typeof Shared;
}

export function configCode(RED: RED): ConfigCode {
  const shared = require('../shared') as typeof Shared;
  const runtime = require('../../runtime') as typeof Runtime;
  if (!bound.has(RED)) {
    bound.add(RED);
    shared.useSharedTexts(RED);
    // The built-in simulator's URL, logged once when it starts (npm start shows it from this line).
    runtime.setSimulatorLog((text) => RED.log.info(text));
  }
  return { runtime, shared };
}
