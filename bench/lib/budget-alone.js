'use strict';
/** The request budget's own cost, timed alone (dist/runtime/budget.js), for the read-overhead benchmark. */
const path = require('node:path');
const { DIST } = require('./common');

/** CPU ns per attempt of the request budget alone (before + after), without caps and with caps never reached. */
function budgetAlone() {
  const { Budget } = require(path.join(DIST, 'runtime', 'budget.js'));
  const attempt = { kind: 'read', method: 'GET', url: '/devices/d/measurements/map?properties=soc', retry: false };
  const time = (caps) => {
    const budget = new Budget();
    budget.configure(caps);
    let best = Infinity;
    for (let round = 0; round < 5; round++) {
      const started = process.cpuUsage();
      for (let i = 0; i < 100_000; i++) {
        budget.before({ ...attempt });
        budget.after(attempt, 'ok');
      }
      const used = process.cpuUsage(started);
      best = Math.min(best, ((used.user + used.system) * 1000) / 100_000);
    }
    return best;
  };
  return {
    noCapsNs: time({ maxPerMinute: 0, maxPerDay: 0, budgetMode: 'refuse' }),
    capsNs: time({ maxPerMinute: 1_000_000, maxPerDay: 100_000_000, budgetMode: 'refuse' }),
  };
}

module.exports = { budgetAlone };
