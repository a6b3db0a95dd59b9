/** The warnings a flow node gives at deploy when it steers without a limit. */
import { callsOf } from './red';

/** The limit warnings node `id` gave. */
export const limitWarnings = (id: string) =>
  callsOf('warn', id)
    .map((a) => String(a[0]))
    .filter((w) => /steers without a limit/.test(w));
