/**
 * Waiting for a state the page or a service reaches on its own (a list loaded, a status shown,
 * a steering state stored): re-reads the value until it satisfies the condition, then returns
 * it; fails with the last value seen and what was awaited.
 */
import { inspect } from 'node:util';

export async function until<T>(
  read: () => Promise<T> | T,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 15000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let error: unknown;
  for (;;) {
    try {
      last = await read();
      error = undefined;
      if (ok(last)) return last;
    } catch (e) {
      error = e;
    }
    if (Date.now() > deadline) {
      const seen = error
        ? `error ${error instanceof Error ? error.message : String(error)}`
        : inspect(last, { depth: 4, breakLength: 120 });
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${seen}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
