'use strict';
/**
 * The load generator of the simulator benchmark in a process of its own (forked by
 * bench/simulator.js), so it does not share a CPU's time slices with the server measured in
 * the parent's bookkeeping. On { url, connections, duration } it runs autocannon and sends back
 * { requests, seconds, errors, non2xx, p99 }; on { exit } it exits.
 */
const autocannon = require('autocannon');

process.on('message', (m) => {
  if (m.exit) process.exit(0);
  autocannon({ url: m.url, connections: m.connections, duration: m.duration, pipelining: 1 }, (err, r) => {
    if (err) process.send({ error: String(err && err.message ? err.message : err) });
    else
      process.send({
        requests: r.requests.total,
        seconds: r.duration,
        errors: r.errors + r.timeouts,
        non2xx: r.non2xx,
        p99: r.latency.p99,
      });
  });
});
process.on('disconnect', () => process.exit(0));
