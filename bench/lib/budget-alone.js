'use strict';
/** The request budget's own cost, timed alone (dist/runtime/budget.js), for the read-overhead benchmark. */
const path = require('node:path');
const { DIST } = require('./common');

/** CPU ns per attempt of the request budget alone (before + after), without caps and with caps never reached. */
function budgetAlone() {
  const { Budget } = require(path.join(DIST, 'runtime', 'budget.js'));
  const attempt = { kind: 'read', method: 'GET', url: '/devices/d/measurements/map?properties=soc', retry: false };
  const time = (caps) => {
    const b = new Budget();
    b.configure(caps);
    let best = Infinity;
    for (let r = 0; r < 5; r++) {
      const t0 = process.cpuUsage();
      for (let i = 0; i < 100_000; i++) {
        b.before({ ...attempt });
        b.after(attempt, 'ok');
      }
      const d = process.cpuUsage(t0);
      best = Math.min(best, ((d.user + d.system) * 1000) / 100_000);
    }
    return best;
  };
  return {
    noCapsNs: time({ maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' }),
    capsNs: time({ maxPerMinute: 1_000_000, maxPerDay: 100_000_000, budgetMode: 'refuse' }),
  };
}

module.exports = { budgetAlone };
