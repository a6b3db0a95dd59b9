/**
 * A node's results while its messages overlap (Status.okLater): held back, their text not even
 * made, shown when the node's messages have ended (release), or at the latest HOLD_MS later;
 * any other status replaces a held one; closing drops it and its timer. The clock and the
 * timer are injected.
 */
import assert from 'node:assert/strict';
import { english, HOLD_MS, Status, type StatusTimers } from '../../../src/nodes/shared/status';

const AT = Date.UTC(2026, 5, 21, 12, 0, 0);

/** A node that records its statuses, and timers that run only when the test says so. */
function setup() {
  const shown: Array<{ fill?: string; text?: string }> = [];
  const timers: Array<{ fn: () => void; ms: number; cleared: boolean }> = [];
  const fakeTimers: StatusTimers = {
    setTimeout: (fn, ms) => {
      const timer = { fn, ms, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimeout: (id) => {
      (id as { cleared: boolean }).cleared = true;
    },
  };
  const status = new Status({ status: (s: object) => shown.push(s) }, english('ems-device-read'), () => AT, fakeTimers);
  const pending = () => timers.filter((timer) => !timer.cleared);
  return { shown, status, pending };
}

describe('nodes: shared status, results held while messages overlap', () => {
  it('a held result is not shown and its text not made until release(); then it shows as ok() would', () => {
    const { shown, status } = setup();
    let made = 0;
    status.okLater(() => {
      made++;
      return 'soc 1 %';
    });
    status.okLater(() => {
      made++;
      return 'soc 2 %';
    });
    assert.equal(shown.length, 0);
    assert.equal(made, 0);
    status.release();
    assert.equal(made, 1, 'only the last held text is made');
    assert.equal(shown.length, 1);
    assert.equal(shown[0].fill, 'green');
    assert.match(shown[0].text ?? '', /^soc 2 % · \d\d:\d\d$/);
    status.release();
    assert.equal(shown.length, 1, 'nothing held any more');
  });

  it('shows the latest held result at the latest HOLD_MS after the first was held (one timer)', () => {
    const { shown, status, pending } = setup();
    status.okLater(() => 'soc 1 %');
    status.okLater(() => 'soc 2 %');
    assert.equal(pending().length, 1);
    assert.equal(pending()[0].ms, HOLD_MS);
    pending()[0].fn();
    assert.equal(shown.length, 1);
    assert.match(shown[0].text ?? '', /^soc 2 %/);
  });

  it('any other status replaces a held result and cancels its timer', () => {
    const { shown, status, pending } = setup();
    status.okLater(() => 'soc 1 %');
    status.error(new Error('boom'));
    assert.equal(pending().length, 0);
    status.release();
    assert.deepEqual(
      shown.map((s) => s.fill),
      ['red'],
    );
  });

  it('closing drops a held result and its timer; nothing shows after', () => {
    const { shown, status, pending } = setup();
    status.okLater(() => 'soc 1 %');
    status.close();
    assert.equal(pending().length, 0);
    status.release();
    status.okLater(() => 'soc 2 %');
    assert.equal(pending().length, 0);
    assert.deepEqual(shown, [{}]);
  });
});
