/**
 * For tests on a fake clock (@sinonjs/fake-timers faking setTimeout): waits real event-loop
 * turns (setImmediate, which those tests never fake) so that sockets and I/O make progress
 * while the fake clock stands still. Bounded by a number of turns, not by time.
 */
export async function realTurns(done: () => boolean, what: string, turns = 5_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (done()) return;
    await new Promise((r) => setImmediate(r));
  }
  if (!done()) throw new Error(`waited ${turns} real turns for ${what}`);
}

/** True when `p` has not settled after `turns` real turns (the fake clock standing still). */
export async function stillPending(p: Promise<unknown>, turns = 50): Promise<boolean> {
  let settled = false;
  p.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let i = 0; i < turns && !settled; i++) await new Promise((r) => setImmediate(r));
  return !settled;
}

/** Lets `turns` real event-loop turns pass (I/O runs; a fake clock stands still). */
export async function idleTurns(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}
