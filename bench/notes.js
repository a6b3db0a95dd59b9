'use strict';
/**
 * Hand-written parts of BENCHMARKS.md per benchmark: `what` (how it is measured, shown
 * first) and `limits` (shown when a goal is not met: what limits it). The measured figures
 * themselves come from the run.
 */
module.exports = {
  'read-overhead': {
    what: `20,000 map reads of 3 properties (334 battery devices round robin) per alternative, at most
64 messages or calls outstanding (HTTP concurrency 6 in every alternative: the config node's
limiter, the agents' maxSockets), 8 interleaved rounds. The goals compare the alternatives round by
round (run back to back, so a slow spell of this shared machine hits both) and take the median of
the 8 per-round ratios; the tables give totals. "Core flow" is change (JSONata URL) →
http request (keep-alive on) → json. "Tuned axios" is axios with the settings our transport
uses (maxRedirects 0, proxy off), the fairest floor for our stack. A second, smaller run keeps
only 6 reads outstanding, a flow that waits for each answer: there the 2 ms coalescing window
is latency instead of being hidden by queueing.`,
    limits: `On loopback the client's CPU is the bottleneck, so the ratios are ratios of CPU per read
(given per alternative). Node-RED's own message passing costs little (the reference row: a
minimal node around the same axios call). The gap is in our stack. Until this run the client combined the node's abort signal with its own
through \`AbortSignal.any()\` on every request, which on Node 20 is slow and leaks (see benchmark 4);
it now makes one combined signal per node signal and builds query strings directly. The rest is the node's
per-message work (property evaluation and validation, the status text, the output message) and
axios-retry's and the auth interceptors' per-request work. The 1.5 × over the core flow is not
reached: the http request node (got) costs only about 1.7-1.8 times as much CPU per read as
axios itself, which leaves our whole stack a budget of about 15-20 % above a bare axios call.
At 6 reads in flight the 2 ms coalescing window costs latency and, on this machine, CPU: each
read's timer is a wake-up of the event loop of its own (coalesceMs 0 removes both).
Between runs, figures of one stack vary by 10-20 % on this shared machine (the reference row, which
does strictly more than bare axios, came out at 0.95-1.3 × bare axios in different runs): read these
ratios to about ±0.1.`,
  },
  coalescing: {
    what: `1,000 single-property reads of 100 devices (10 per device over its properties), sent to one
ems-device-read node (mode single) in one burst, in the Node-RED runtime; coalescing on (config
default, 2 ms) and off (coalesceMs 0), 7 rounds alternating after 2 warm-up bursts each. The
simulator's clock is frozen, so every coalesced answer is compared field by field with the
answer of the same read without coalescing.`,
    limits: `Both runs pay the same Node-RED cost for the 1,000 messages; coalescing only removes HTTP
requests, so the time ratio cannot go below (Node-RED cost + 100 requests) / (Node-RED cost + 1,000
requests).`,
  },
  'time-series': {
    what: `One year of hourly data (8,760 points, 13 requests of at most 30 days) of a battery's energy
counter, with 50 ms latency added by the simulator to each request, through
EmsClient.getTimeSeriesRange, against the same 13 requests one after another. The round trip is
the median time of one 30-day request alone. 5 rounds, medians.`,
    limits: `With the default concurrency of 6, 13 spans take 3 waves, so no client can be more than
13 / 3 = 4.33 times faster than one request after another, and any cost that grows with the
number of requests in flight comes off that margin. The simulator answers on one thread and
spends about 2 ms of CPU on each 30-day answer (the counter's baseline and 720 ISO timestamps),
so a wave of 6 comes back over about 12 ms instead of at once: each wave takes about 62 ms against
55 ms for one request, the 3 waves about 190 ms, and the speed-up is about 3.7. The merge of the 13
answers (about 3.5 ms) adds to the last wave. With 8 requests in flight the speed-up is about 5, and
the 2 waves take 1.2-1.35 round trips in our runs (8 × 2 ms of the simulator's time per wave), close
to the 1.3 bound. So both limits come from the simulator's time per answer, not from waiting in the
client.
A merge that compares timestamps as strings instead of parsing each would save about 2 ms of the
3 ms merge (measured); it was left out as not worth its complexity here.`,
  },
  'fleet-polling': {
    what: `5,000 ems-device-read nodes (one per device of 1,667 generated sites, map of power and
totalEnergyProduced) poll every 10 s through one config node and its shared PollScheduler, in
the Node-RED runtime, for 2 minutes; the simulator runs in a child process. CPU is this process's
user + system time over the 2 minutes; heap is measured after a forced GC at minute 1 and at the
end.`,
    limits: `15 % of a core for 500 polls a second is 300 µs per poll, including the HTTP request and
response. On this machine a request costs far more than that when requests are spread out: a
bare \`node:http\` client alone used 7-12 % of a core for the same 500 requests a second in
batches of 10, and 25-30 % when sent one at a time, because each wake-up of the event loop costs
a few hundred µs here. Measured in parts (same scenario, 30 s runs): Node-RED with our node, the
coalescer and the scheduler but no HTTP at all, about 7.5 %; with the client stack and a stub in
place of the socket (axios, axios-retry, interceptors), about 18 %; with real sockets through
axios's HTTP adapter about 45 %, and with a minimal \`node:http\` adapter in place of axios's about
36 %. The scheduler now starts the polls that are due in 20 ms slots instead of one per 2 ms (57 %
before, same runs). The client change against the AbortSignal.any() leak brought a 2-minute run from 39 % to 34 %.
Meeting 15 % needs an HTTP path without axios for reads, a change of transport.ts for the lead to
decide on.

Heap: before this run, the heap grew linearly, about 77 bytes per read: \`AbortSignal.any()\` per
request in EmsClient.request kept a record in the node's and the client's long-lived signals on
Node 20 (300,000 calls kept 29 MB after GC in isolation; over 100 MB an hour for 5,000 devices
every 10 s). The client now makes one combined signal per node signal; the heap figure above is
measured with that change.`,
  },
  footprint: {
    what: `npm pack, then npm install --omit=dev of the tarball into a fresh Node-RED user directory
(registry reachable). Node-RED is started as a real process (-p 0) on that directory and on an
empty one, alternating, until "Started flows"; medians. The admin API confirms the four node
sets are loaded. "requireNodeFilesMs" is the time to require the node files (axios loads on first use) in a
fresh Node.js process, a steadier view of the same cost.`,
    limits: `The tree is axios and its dependencies: axios alone installs about 2.2 MB (1.6 MB of it
browser and ESM bundles we never load), form-data, mime-db, follow-redirects, the proxy agents and
their polyfills another 0.7 MB; this package is about 0.45 MB. No change to our own files can
bring the tree under 3 MB while axios is a dependency; a transport on \`node:http\` (no runtime
dependency) would make the install about 0.5 MB and also take most of the cost measured in
benchmarks 1 and 4. axios costs about 130 ms to require, so the package loads it (and the built-in simulator) only
when a config node first needs it: requiring the node files went from about 150 ms to about 26 ms.
Node-RED's start time varies by a few hundred ms between runs on this machine,
so the start-up difference is a median of noisy runs.`,
  },
  simulator: {
    what: `autocannon (10 connections, 8 s, 2 rounds alternating, after a 2 s warm-up each) from this
process against GET /devices/{ref}/measurement?property=soc of the simulator, and against a bare
node:http server answering the same 97-byte JSON with the same headers; both servers are child
processes.`,
    limits: `The simulator validates, routes, advances the site's model to the current instant, logs
every request (last 10,000) and serialises a fresh answer; the bare server sends a fixed string.`,
  },
};
