/**
 * What the nodes share (a helper used by more than one node lives here): the Node-RED types,
 * the scaffold (config node, registration, connection status, close), status texts, messages,
 * evaluation of typed inputs, migrations, the steering command and its checks, renewal.
 * Node folders import from here; the modules here import each other directly.
 */
export * from './node-red-api';
export * from './scaffold';
export * from './config-node';
export * from './status';
export * from './messages';
export * from './evaluate';
export * from './migrations';
export * from './max-split';
export * from './poll-backoff';
export * from './steer-command';
export * from './steer-grid-limits';
export * from './steer-percent';
export * from './steer-verify';
export * from './renewal';
export * from './steer-ratings';
export * from './lazy';
