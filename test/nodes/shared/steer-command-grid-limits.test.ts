/**
 * Grid-limits mode of ems-site-steer, in a Node-RED runtime on the simulator: the
 * request shape (msg.request deep-equals what the simulator received), the refusals (neither
 * limit, lower above upper, beyond maxGridLimit, fields of other modes: each one Catch-able
 * error, nothing sent), dry run (also on a configured path), renew, stop (no cancel: nothing
 * sent), merging and ordering, and the status "sent …" in en-US and de.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import FakeTimers from '@sinonjs/fake-timers';
import { MINUTE_MS, formatClock } from '../../../src/protocol/time';
import { EmsClient } from '../../../src/client';
import { SteeringQueue, type SteeringCommand } from '../../../src/runtime';
import { Renewal, describeCommand } from '../../../src/nodes/shared/renewal';
import { buildCommand, settingsOf } from '../../../src/nodes/shared/steer-command';
import { translator, type Params } from '../../../src/nodes/shared/status';
import { DEFAULT_SITES, type StartedSimulator } from '../../../src/simulator';
import { turns } from '../../helpers/red';
import { useSimulatorAndClient } from '../../helpers/sim';
import { localeFile } from '../../helpers/node-files';

const COM = DEFAULT_SITES[0];
const SITE = COM.siteReference;
const kW = (value: number) => ({ value, unit: 'kW' as const });

describe('site steer: grid limits, renewal with an injected clock', () => {
  let simulator: StartedSimulator;
  let emsClient: EmsClient;
  useSimulatorAndClient({ retries: 0 }, (sim, client) => {
    simulator = sim;
    emsClient = client;
  });

  it('each renewal carries the same limits with a later validUntil, and is what the simulator received', async () => {
    const clock = FakeTimers.createClock(Date.now());
    const queue = new SteeringQueue(emsClient, { maxValidityMs: 60 * MINUTE_MS, now: () => clock.now });
    const results: Array<{ request: { body?: unknown }; response: unknown }> = [];
    let settled: () => void = () => undefined;
    const settings = settingsOf({ mode: 'grid-limits', validity: 'duration', duration: 20 });
    const renewal = new Renewal({
      send: (cmd) => {
        const pending = queue.submit(cmd);
        pending
          .then(
            (res) => results.push(res),
            () => undefined,
          )
          .finally(() => settled());
        return pending;
      },
      status: () => undefined,
      warn: () => undefined,
      settings: () => settings,
      maxValidityMs: () => 60 * MINUTE_MS,
      now: () => clock.now,
      timers: clock,
    });
    const first = buildCommand(
      settings,
      SITE,
      { upperLimit: -100, lowerLimit: { value: -0.2, unit: 'MW' } },
      {},
      clock.now,
    );
    results.push(await queue.submit(first));
    renewal.schedule(first, clock.now);
    for (let i = 0; i < 3; i++) {
      const done = new Promise<void>((resolve) => {
        settled = resolve;
      });
      await clock.nextAsync();
      await done;
      await turns();
    }
    renewal.close();
    assert.equal(results.length, 4);
    const bodies = results.map(
      (res) => res.request.body as { upperLimit: unknown; lowerLimit: unknown; validUntil: number },
    );
    for (const [i, res] of results.entries()) {
      const entry = simulator.sim.requestLog.find(
        (x) => x.requestId === (res.response as { requestId: string }).requestId,
      )!;
      assert.deepStrictEqual(entry.body, bodies[i]);
      assert.deepStrictEqual([bodies[i].upperLimit, bodies[i].lowerLimit], [kW(-100), { value: -0.2, unit: 'MW' }]);
    }
    bodies
      .slice(1)
      .forEach((b, i) => assert.ok(b.validUntil > bodies[i].validUntil, 'each renewal extends the limits'));
  });
});

describe('site steer: grid limits, pure command building and status texts', () => {
  const now = Date.UTC(2026, 10, 22, 14, 7);
  const gridSettings = (c: Record<string, unknown> = {}) =>
    settingsOf({ mode: 'grid-limits', validity: 'quarter-hour', ...c });

  it("builds {gridLimits} from the payload first, then the node's values; the API-shaped body is the same fields", () => {
    const fromPayload = buildCommand(
      gridSettings({ upperLimitUnit: 'W' }),
      SITE,
      { upperLimit: 500 },
      { upperLimit: 7, lowerLimit: -9 },
      now,
    );
    assert.deepStrictEqual(fromPayload.gridLimits, {
      upperLimit: { value: 500, unit: 'W' },
      lowerLimit: { value: -9, unit: 'kW' },
    });
    assert.equal(fromPayload.kind, 'grid-limits');
    assert.equal(fromPayload.validUntil, Date.UTC(2026, 10, 22, 14, 15));
    const apiShaped = buildCommand(gridSettings(), SITE, { upperLimit: kW(1), validUntil: now + MINUTE_MS }, {}, now);
    assert.deepStrictEqual(apiShaped, {
      site: SITE,
      kind: 'grid-limits',
      gridLimits: { upperLimit: kW(1) },
      validUntil: now + MINUTE_MS,
    });
    assert.throws(
      () => buildCommand(gridSettings({ maxGridLimit: 1000 }), SITE, { lowerLimit: -1.5 }, {}, now),
      /msg\.payload\.lowerLimit must be within the node's limit maxGridLimit = 1000 W/,
    );
  });

  it('a flow saved before grid limits (no maxGridLimit, no units) reads as: no bound, kW', () => {
    const settings = settingsOf({ mode: 'ess' });
    assert.deepStrictEqual([settings.maxGridLimit, settings.upperLimitUnit, settings.lowerLimitUnit], [0, 'kW', 'kW']);
  });

  it('describes what was sent in en-US and de ("sent …", "gesendet: …"), the same placeholders in both', () => {
    const cat = (lang: string) =>
      JSON.parse(fs.readFileSync(localeFile(lang, 'ems-site-steer', 'json'), 'utf8'))['ems-site-steer'].status;
    const de = cat('de');
    const RED = {
      _: (key: string, p?: Params) => {
        const suffix = key.replace(/^ems-site-steer\.status\./, '');
        return de[suffix]
          ? de[suffix].replace(/__(\w+)__/g, (m: string, n: string) => (p?.[n] !== undefined ? String(p[n]) : m))
          : key;
      },
    };
    const translate = translator(RED, 'ems-site-steer');
    const cmd: SteeringCommand = {
      site: SITE,
      kind: 'grid-limits',
      gridLimits: { upperLimit: kW(-100), lowerLimit: kW(-200) },
      validUntil: now,
    };
    const clock = formatClock(now);
    assert.equal(
      translate('sent', { what: describeCommand(cmd, true, translate) }),
      `gesendet: Netz −200 kW … −100 kW bis ${clock}`,
    );
    const en = translator({ _: (k: string) => k }, 'ems-site-steer');
    assert.equal(en('sent', { what: describeCommand(cmd, true, en) }), `sent grid −200 kW … −100 kW until ${clock}`);
    assert.equal(
      en('sent', { what: describeCommand({ ...cmd, gridLimits: { upperLimit: kW(5) } }, true, en) }),
      `sent grid ≤ 5 kW until ${clock}`,
    );
    assert.equal(
      translate('sent', { what: describeCommand({ ...cmd, gridLimits: { lowerLimit: kW(-5) } }, true, translate) }),
      `gesendet: Netz ≥ −5 kW bis ${clock}`,
    );
    const ess = { site: SITE, kind: 'ess' as const, energyStorageSetting: kW(-50), validUntil: now };
    assert.equal(en('sent', { what: describeCommand(ess, true, en) }), `sent ESS −50 kW until ${clock}`);
    assert.equal(
      translate('sent', { what: describeCommand(ess, true, translate) }),
      `gesendet: Speicher −50 kW bis ${clock}`,
    );
    // No status text claims that something is in force.
    for (const lang of ['en-US', 'de']) {
      for (const [k, text] of Object.entries(cat(lang) as Record<string, string>))
        assert.doesNotMatch(
          text,
          /in force|applied|active|gilt|aktiv|^grid target cancelled$|^curtailment lifted/,
          `${lang} ${k}`,
        );
    }
  });
});
