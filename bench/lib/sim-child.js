'use strict';
/**
 * A server in a child process, so the load it serves does not share the event loop of the
 * process being measured. Usage: node sim-child.js '<json>' with
 *   { "mode": "sim", "fleetSites": 1667, "latencyMs": 50, "frozen": true }  the reference simulator (dist/)
 *   { "mode": "bare", "body": "...", "requestId": "req_..." }  a bare node:http JSON server
 * Prints one line `listening on http://127.0.0.1:PORT`; stops on SIGTERM / SIGINT.
 */
const http = require('node:http');
const path = require('node:path');
const { fleetSites } = require('./fleet-sites');

const opts = JSON.parse(process.argv[2] || '{}');
const { DIST } = require('./common');

async function main() {
  let close;
  let url;
  if (opts.mode === 'bare') {
    const body = opts.body;
    const len = Buffer.byteLength(body);
    const server = http.createServer({ keepAlive: true }, (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': len,
        'x-request-id': opts.requestId,
      });
      res.end(body);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${server.address().port}`;
    close = () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
  } else {
    const { startSimulator } = require(path.join(DIST, 'simulator'));
    const sites = opts.fleetSites ? fleetSites(opts.fleetSites) : undefined;
    const sim = await startSimulator({
      host: '127.0.0.1',
      port: 0,
      seed: 1,
      sites,
      latencyMs: opts.latencyMs,
      frozen: !!opts.frozen,
    });
    url = sim.url;
    close = sim.close;
  }
  process.stdout.write(`listening on ${url}\n`);
  const stop = () => close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.on('disconnect', stop);
  // A benchmark stopped by its guard (process.exit) leaves no signal: stop once the parent is gone.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 2000).unref();
}

main().catch((e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
