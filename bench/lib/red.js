'use strict';
/**
 * The Node-RED runtime for the benchmarks: node-red-node-test-helper (in-process), with its
 * sinon spies on Node.prototype (send, status, log, ...) removed after loading, because they
 * record every call and would be measured instead of the nodes.
 */
const path = require('node:path');
const helper = require('node-red-node-test-helper');
const { DIST } = require('./common');

helper.init(require.resolve('node-red'));

const CORE = path.dirname(require.resolve('@node-red/nodes/package.json'));
const core = {
  inject: require(path.join(CORE, 'core/common/20-inject.js')),
  change: require(path.join(CORE, 'core/function/15-change.js')),
  httpRequest: require(path.join(CORE, 'core/network/21-httprequest.js')),
  json: require(path.join(CORE, 'core/parsers/70-JSON.js')),
};
const ours = ['ems-partner-config', 'ems-device-read', 'ems-time-series'].map((t) =>
  require(path.join(DIST, 'nodes', `${t}.js`)),
);
const SPIED = ['log', 'status', 'warn', 'error', 'debug', 'trace', 'send'];

async function start() {
  await helper.startServer();
}

/**
 * Loads a flow on one tab (config nodes, which have no wires, stay off the tab); `coreNodes`
 * names the entries of `core` it needs, `extraModules` are further node modules (function (RED)).
 */
async function load(nodes, coreNodes = [], extraModules = []) {
  const flow = [
    { id: 'tab', type: 'tab', label: 'bench' },
    ...nodes.map((n) => (/-config$/.test(n.type) ? n : { z: 'tab', x: 0, y: 0, ...n })),
  ];
  const proto = helper._NodePrototype;
  const saved = {};
  for (const m of SPIED) saved[m] = proto[m];
  await helper.load([...ours, ...coreNodes.map((n) => core[n]), ...extraModules], flow);
  const spiedSend = proto.send;
  for (const m of SPIED) proto[m] = saved[m];
  // A wired node keeps its own reference to send (Node.updateWires): swap that one too.
  for (const n of flow) {
    const node = helper.getNode(n.id);
    if (node && Object.prototype.hasOwnProperty.call(node, 'send') && node.send === spiedSend) node.send = saved.send;
  }
  if (helper._logSpy) helper._logSpy.restore();
}

/** Counts messages arriving at a `helper` node. */
function counter(id) {
  const node = helper.getNode(id);
  const seen = { n: 0, last: undefined, waiters: [] };
  node.on('input', (msg, _send, done) => {
    seen.n++;
    seen.last = msg;
    done();
    if (seen.waiters.length) for (const w of seen.waiters.splice(0)) w();
  });
  return seen;
}

/**
 * Messages correlated by `seq`: `send(id, msg)` hands `msg` to node `id` and settles when it
 * arrives at the `helper` node `sink` (resolved with it if `accepted(msg)`) or, via a catch, at
 * `errs`; otherwise rejected with "message <seq> <failure(msg)>".
 */
function messenger(accepted, failure) {
  const pending = new Map();
  let seq = 0;
  const settle = (msg, ok) => {
    const waiter = pending.get(msg.seq);
    if (!waiter) return;
    pending.delete(msg.seq);
    if (ok && accepted(msg)) waiter.resolve(msg);
    else waiter.reject(new Error(`message ${msg.seq} ${failure(msg)}`));
  };
  helper.getNode('sink').on('input', (msg, _s, done) => {
    settle(msg, true);
    done();
  });
  helper.getNode('errs').on('input', (msg, _s, done) => {
    settle(msg, false);
    done();
  });
  return (id, msg) =>
    new Promise((resolve, reject) => {
      const seqNo = seq++;
      pending.set(seqNo, { resolve, reject });
      helper.getNode(id).receive({ ...msg, seq: seqNo });
    });
}

async function stop() {
  try {
    await helper.unload();
  } catch {
    /* the restored spies may already be gone */
  }
  await helper.stopServer();
}

module.exports = { helper, start, load, counter, messenger, stop, getNode: (id) => helper.getNode(id) };
