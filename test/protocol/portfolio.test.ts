import assert from 'node:assert/strict';
import { parseFleetSites, parseSiteList, portfolioSplitOf, splitPower, weightOf } from '../../src/protocol/portfolio';
import { SERVICE } from '../../src/protocol/limits';

const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);

describe('portfolio: the site list forms', () => {
  it('msg.sites: references and {site, maxPowerW, soc} objects, mixed; strings trimmed', () => {
    assert.deepEqual(
      parseFleetSites(['ste_a', { site: 'ste_b', maxPowerW: 5000, soc: '40' }, ' ste_c '], 'msg.sites'),
      [{ site: 'ste_a' }, { site: 'ste_b', maxPowerW: 5000, soc: 40 }, { site: 'ste_c' }],
    );
  });

  it('refuses a bad list naming the field and index: not an array, empty, bad entry, unknown key, bad rating or SOC', () => {
    assert.throws(
      () => parseFleetSites('ste_a', 'msg.sites'),
      /^ValidationError: msg\.sites must be an array of site references/,
    );
    assert.throws(() => parseFleetSites([], 'msg.sites'), /msg\.sites must list at least one site/);
    assert.throws(() => parseFleetSites(['ste_a', 'bad ref'], 'msg.sites'), /msg\.sites\[1\] must be a reference/);
    assert.throws(
      () => parseFleetSites([{ site: 'ste_a', power: 1 }], 'msg.sites'),
      /msg\.sites\[0\]\.power is not a field of a fleet site; accepted: site, maxPowerW, soc/,
    );
    assert.throws(
      () => parseFleetSites([{ site: 'ste_a', maxPowerW: 0 }], 'msg.sites'),
      /msg\.sites\[0\]\.maxPowerW must be the battery's power rating/,
    );
    assert.throws(
      () => parseFleetSites([{ site: 'ste_a', soc: 101 }], 'msg.sites'),
      /msg\.sites\[0\]\.soc must be the battery's state of charge/,
    );
    assert.throws(() => parseFleetSites([{ maxPowerW: 5 }], 'msg.sites'), /msg\.sites\[0\]\.site must be a reference/);
  });

  it('refuses a site listed twice, naming both indexes; nothing is sent', () => {
    assert.throws(
      () => parseFleetSites(['ste_a', 'ste_b', { site: 'ste_a' }], 'msg.sites'),
      (e: Error & { field?: string }) => {
        assert.equal(e.field, 'msg.sites[2]');
        assert.match(e.message, /msg\.sites\[2\] repeats site ste_a \(also msg\.sites\[0\]\)/);
        return true;
      },
    );
  });

  it(`refuses more than SERVICE.maxFleetSites (${SERVICE.maxFleetSites}) before looking at the entries`, () => {
    const many = new Array(SERVICE.maxFleetSites + 1).fill('not checked');
    assert.throws(
      () => parseFleetSites(many, 'msg.sites'),
      new RegExp(
        `msg\\.sites lists ${SERVICE.maxFleetSites + 1} sites; one message steers at most ${SERVICE.maxFleetSites}`,
      ),
    );
    const ok = Array.from({ length: SERVICE.maxFleetSites }, (_, i) => `ste_${i}`);
    assert.equal(parseFleetSites(ok, 'msg.sites').length, SERVICE.maxFleetSites);
  });

  it("the node's sites text: empty, references by commas / semicolons / new lines, a JSON array; errors name `sites`", () => {
    assert.deepEqual(parseSiteList(''), []);
    assert.deepEqual(parseSiteList(undefined), []);
    assert.deepEqual(
      parseSiteList(' ste_a, ste_b;ste_c\n\nste_d  '),
      ['ste_a', 'ste_b', 'ste_c', 'ste_d'].map((site) => ({ site })),
    );
    assert.deepEqual(parseSiteList('[{"site":"ste_a","maxPowerW":10000},"ste_b"]'), [
      { site: 'ste_a', maxPowerW: 10000 },
      { site: 'ste_b' },
    ]);
    assert.throws(() => parseSiteList('[{"site":'), /^ValidationError: sites starts with "\[" but is not a JSON array/);
    assert.throws(() => parseSiteList('ste_a, ste_a'), /sites\[1\] repeats site ste_a \(also sites\[0\]\)/);
    assert.throws(() => parseSiteList(5), /sites must be text/);
  });

  it('portfolioSplit: rating (default) or soc', () => {
    assert.equal(portfolioSplitOf(undefined), 'rating');
    assert.equal(portfolioSplitOf(''), 'rating');
    assert.equal(portfolioSplitOf('soc'), 'soc');
    assert.throws(() => portfolioSplitOf('even'), /portfolioSplit must be one of rating, soc; got "even"/);
  });
});

describe('portfolio: the split', () => {
  it('in proportion to the weights, whole watts summing exactly to the total', () => {
    const split = splitPower(100_000, [
      { weight: 10_000, capW: 10_000 },
      { weight: 30_000, capW: 30_000 },
      { weight: 60_000, capW: 60_000 },
    ]);
    assert.deepEqual(split.partsW, [10_000, 30_000, 60_000]);
    assert.equal(split.allocatedW, 100_000);
    assert.equal(split.shortfallW, 0);
    const odd = splitPower(1000, [
      { weight: 1, capW: Infinity },
      { weight: 1, capW: Infinity },
      { weight: 1, capW: Infinity },
    ]);
    assert.equal(sum(odd.partsW), 1000);
    assert.ok(odd.partsW.every((p) => p === 333 || p === 334));
  });

  it('charging keeps the sign; parts stay within each cap and what a capped site cannot take goes to the others', () => {
    // Weights 1:1:2, but the third may take only 10 kW: it takes 10 kW, the rest splits 1:1.
    const split = splitPower(-50_000, [
      { weight: 1, capW: 100_000 },
      { weight: 1, capW: 100_000 },
      { weight: 2, capW: 10_000 },
    ]);
    assert.deepEqual(split.partsW, [-20_000, -20_000, -10_000]);
    assert.equal(split.allocatedW, -50_000);
    assert.equal(split.shortfallW, 0);
  });

  it('reports the shortfall when the fleet cannot take the total; every site then at its cap', () => {
    const split = splitPower(50_000, [
      { weight: 10_000, capW: 10_000 },
      { weight: 20_000, capW: 20_000 },
    ]);
    assert.deepEqual(split.partsW, [10_000, 20_000]);
    assert.equal(split.allocatedW, 30_000);
    assert.equal(split.shortfallW, 20_000);
  });

  it('a site of weight 0 takes nothing; all weights 0 leave the whole total short; a total of 0 gives every site 0 W', () => {
    const split = splitPower(9_000, [
      { weight: 0, capW: 10_000 },
      { weight: 3, capW: 10_000 },
    ]);
    assert.deepEqual(split.partsW, [0, 9_000]);
    const none = splitPower(-5_000, [{ weight: 0, capW: 10_000 }]);
    assert.deepEqual([none.partsW, none.allocatedW, none.shortfallW], [[0], 0, 5_000]);
    assert.deepEqual(
      splitPower(0, [
        { weight: 1, capW: 5 },
        { weight: 2, capW: 5 },
      ]).partsW,
      [0, 0],
    );
  });

  it('random fleets: sums within 1 W of the total (or of what the caps allow), no part above its cap, signs kept', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      const siteCount = 1 + Math.floor(rnd() * 40);
      const sites = Array.from({ length: siteCount }, () => ({
        weight: rnd() < 0.1 ? 0 : rnd() * 100,
        capW: rnd() < 0.2 ? Infinity : Math.round(rnd() * 50_000),
      }));
      const total = (rnd() - 0.5) * 2_000_000 + rnd();
      const split = splitPower(total, sites);
      const room = sum(sites.map((s) => (s.weight > 0 ? s.capW : 0)));
      assert.ok(Math.abs(sum(split.partsW) - split.allocatedW) < 1e-9);
      if (room >= Math.abs(total))
        assert.ok(Math.abs(split.allocatedW - total) <= 1, `round ${round}: ${split.allocatedW} vs ${total}`);
      else assert.ok(Math.abs(Math.abs(split.allocatedW) + split.shortfallW - Math.abs(total)) < 1e-6);
      split.partsW.forEach((p, i) => {
        assert.ok(Math.abs(p) <= sites[i].capW, `part ${p} over cap ${sites[i].capW}`);
        assert.ok(p === 0 || Math.sign(p) === Math.sign(total));
        if (sites[i].weight === 0) assert.equal(p, 0);
      });
    }
  });

  it('weights: rating, or SOC headroom when charging and SOC when discharging', () => {
    assert.equal(weightOf('rating', 5, { maxPowerW: 7 }), 7);
    assert.equal(weightOf('rating', 5, {}), undefined);
    assert.equal(weightOf('soc', -5, { soc: 30 }), 70);
    assert.equal(weightOf('soc', 5, { soc: 30 }), 30);
    assert.equal(weightOf('soc', 5, {}), undefined);
  });
});
