/**
 * The vendor's published curtailment type has W, kW and MW only. With the config
 * node's percentCurtailment "convert" (the default of a new config node) a `%` limit is sent
 * in W, integer, of the site's installed PV power: the node's pvPeakPower when set, else
 * msg.pvPeakPower, else the site's pvPeakPower in GET /sites (read once per runtime). Without
 * any, the message is refused with an error that says what to set, and nothing is sent.
 * "send" keeps `unit: "%"`, as does a config node saved before (migration 3).
 */
import assert from 'node:assert/strict';
import { convertPercent, cachedSites, SITES_TTL_MS, FAILED_MS } from '../../../src/nodes/shared/steer-percent';
import type { SiteSummary } from '../../../src/protocol/types';

describe('steer-percent: conversion and the site-list cache (pure)', () => {
  const cmd = {
    site: 's',
    kind: 'curtailment' as const,
    productionCurtailment: { value: 12.5, unit: '%' as const },
    validUntil: 1,
  };
  const list = (w?: number): SiteSummary[] => [{ siteReference: 's', name: 'S', devices: [], pvPeakPower: w }];

  it('leaves kW, and % under "send", as they are; converts % with the first PV power known', async () => {
    const kw = { ...cmd, productionCurtailment: { value: 3, unit: 'kW' as const } };
    assert.equal(await convertPercent(kw, 'convert', { node: 0, msg: undefined }, { maxCurtailment: 0 }), kw);
    assert.equal(await convertPercent(cmd, 'send', { node: 0, msg: undefined }, { maxCurtailment: 0 }), cmd);
    const via = async (node: number, msg: unknown, w?: number) =>
      (await convertPercent(cmd, 'convert', { node, msg, sites: async () => list(w) }, { maxCurtailment: 0 }))
        .productionCurtailment;
    assert.deepStrictEqual(await via(8000, 4000, 2000), { value: 1000, unit: 'W' });
    assert.deepStrictEqual(await via(0, 4000, 2000), { value: 500, unit: 'W' });
    assert.deepStrictEqual(await via(0, undefined, 2000), { value: 250, unit: 'W' });
    assert.deepStrictEqual(await via(0, '', 2000), { value: 250, unit: 'W' });
    await assert.rejects(via(0, undefined, undefined), /GET \/sites lists the site without its pvPeakPower/);
    await assert.rejects(
      convertPercent(cmd, 'convert', { node: 0, msg: undefined }, { maxCurtailment: 0 }),
      /pvPeakPower is needed .*; no site list was read; nothing was sent$/,
    );
  });

  it('caches a site list per runtime for SITES_TTL_MS, a failure for FAILED_MS', async () => {
    const owner = {};
    let reads = 0;
    const ok = async () => {
      reads++;
      return list(1);
    };
    const t0 = 1_000_000;
    await cachedSites(owner, ok, t0);
    await cachedSites(owner, ok, t0 + SITES_TTL_MS - 1);
    assert.equal(reads, 1);
    await cachedSites(owner, ok, t0 + SITES_TTL_MS);
    assert.equal(reads, 2);
    const other = {};
    const failing = async (): Promise<SiteSummary[]> => {
      reads++;
      throw new Error('down');
    };
    await assert.rejects(cachedSites(other, failing, t0), /down/);
    await assert.rejects(cachedSites(other, failing, t0 + FAILED_MS - 1), /down/);
    assert.equal(reads, 3);
    assert.deepStrictEqual(await cachedSites(other, ok, t0 + FAILED_MS), list(1));
  });
});
