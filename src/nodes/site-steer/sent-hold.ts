/**
 * The status of one-site messages while several of a node overlap. "sending ..." shows when a
 * message starts with no other under way; a result ("sent ...") shows at once when no other is
 * under way, else it is held back (its text not even made) until the last one ends, or at the
 * latest HOLD_MS after it was first held. A node sending thousands of overlapping messages a
 * second so updates its status about once a second, as ems-device-read does, not twice per
 * message. A failure drops what is held (its error status is the newer one), and so does any
 * other status of the node's own (a stop, a renewal, a fleet).
 */
import { HOLD_MS } from '../shared';

export class SentHold {
  /** One-site messages between start and their result or failure. */
  private inFlight = 0;
  /** The latest result held back, shown by calling it. */
  private held?: () => void;
  private timer?: NodeJS.Timeout;

  /** A message starts sending: `busy` shows its "sending" status when no other is under way. */
  start(busy: () => void): void {
    if (this.inFlight++ === 0) busy();
  }

  /** A message was sent: `show` shows its result now when no other is under way, else later. */
  sent(show: () => void): void {
    if (--this.inFlight === 0) {
      this.drop();
      show();
      return;
    }
    this.held = show;
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, HOLD_MS);
      this.timer.unref();
    }
  }

  /** A message failed: its error status (shown by the caller) is newer than any result held. */
  failed(): void {
    this.inFlight--;
    this.drop();
  }

  /** Another status of the node replaces the held result. */
  drop(): void {
    this.held = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    const held = this.held;
    this.held = undefined;
    held?.();
  }
}
