/**
 * The status of one-site messages while several of a node overlap. "sending ..." shows when a
 * message starts with no other under way; a result ("sent ...") shows at once when no other is
 * under way, else the node's Status holds it back (its text not even made) until the last one
 * ends, or at the latest HOLD_MS after it was first held (Status.later, as ems-device-read's
 * results). A node sending thousands of overlapping messages a second so updates its status
 * about once a second, not twice per message. Any other status of the node (an error, a stop,
 * a renewal, a fleet, standby) replaces what is held.
 */
import type { Status } from '../shared';

export class SentHold {
  /** One-site messages between start and their result or failure. */
  private inFlight = 0;

  constructor(private readonly status: Pick<Status, 'later'>) {}

  /** A message starts sending: `busy` shows its "sending" status when no other is under way. */
  start(busy: () => void): void {
    if (this.inFlight++ === 0) busy();
  }

  /** A message was sent: `show` shows its result now when no other is under way, else later. */
  sent(show: () => void): void {
    if (--this.inFlight === 0) show();
    else this.status.later(show);
  }

  /** A message failed: its error status (shown by the caller) replaces any result held. */
  failed(): void {
    this.inFlight--;
  }
}
