import assert from 'node:assert/strict';
import type { SteeringCommand } from '../../../src/runtime';
import { Renewal } from '../../../src/nodes/shared/renewal';
import { settingsOf } from '../../../src/nodes/shared/steer-command';
import { DEFAULT_SITES } from '../../../src/simulator/index';
import { turns } from '../../helpers/red';

const COM = DEFAULT_SITES[0];

const SITE = COM.siteReference;

describe('nodes: renewal of steering signals', () => {
  const cmd = (value: number, validUntil: number): SteeringCommand => ({
    site: SITE,
    kind: 'ess',
    energyStorageSetting: { value, unit: 'kW' },
    validUntil,
  });

  /** A Renewal whose sends wait until the test releases them. */
  function renewal() {
    const sent: SteeringCommand[] = [];
    const waiting: Array<() => void> = [];
    let onSend: (() => void) | undefined;
    const renewal = new Renewal({
      send: (c) =>
        new Promise((resolve) => {
          sent.push(c);
          waiting.push(() => resolve({ request: { method: 'POST', path: '-' }, response: {}, merged: false }));
          onSend?.();
        }),
      status: () => undefined,
      warn: () => undefined,
      settings: () => settingsOf({ mode: 'ess', validity: 'duration', duration: 0.05 }),
    });
    const nextSend = () =>
      new Promise<void>((resolve) => {
        onSend = resolve;
      });
    return { r: renewal, sent, release: () => waiting.shift()?.(), nextSend };
  }

  it('stop while a renewal is in flight: the renewal is not re-armed', async () => {
    const { r, sent, release, nextSend } = renewal();
    const fired = nextSend();
    const now = Date.now();
    r.schedule(cmd(1, now + 2_050), now); // renew lead 2 s: fires in 50 ms
    await fired;
    assert.equal(sent.length, 1);
    r.stop(SITE);
    release();
    await turns();
    assert.equal(r.pending, 0, 'nothing re-armed after stop');
    assert.equal(r.count, 1);
    r.close();
  });

  it('a renewal that completes normally re-arms with the next validity', async () => {
    const { r, sent, release, nextSend } = renewal();
    const fired = nextSend();
    const now = Date.now();
    r.schedule(cmd(1, now + 2_050), now);
    await fired;
    release();
    await turns();
    assert.equal(r.pending, 1);
    assert.ok(sent[0].validUntil! >= now + 3_000, "now plus the node's 3 s");
    r.close();
    assert.equal(r.pending, 0);
  });
});
