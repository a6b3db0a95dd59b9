/**
 * Writes the schedule node's state to its context: the latest state, one write at a time (a
 * write under way is followed by the latest one), in turn with keeping a stored value that
 * could not be read (stored.ts) before anything is written over it.
 */
import type { PlayerState } from '../../runtime';
import type { Node } from '../shared';
import { keepUnread, savedForm, STATE_KEY, type Store } from './stored';

export type ContextNode = Node & { context(): Store };

export class StateWriter {
  /** The state to write next. */
  private latest: PlayerState | undefined;
  /** The writes (and keeps) in turn: settles once the last one ended. */
  private writing: Promise<void> = Promise.resolve();
  /** A write is queued that has not taken `latest` yet. */
  private dirty = false;
  /** Why nothing may be written to the node's key: it holds a value that could not be read, and it could not be kept elsewhere. */
  held: string | undefined;
  private heldWarned = false;

  constructor(
    private readonly node: ContextNode,
    /** The context store ('' or undefined: the default store). */
    private readonly store: string | undefined,
  ) {}

  /** Settles once every write queued so far ended. */
  written(): Promise<void> {
    return this.writing;
  }

  /** Saves `state` (the latest one wins when writes queue up). */
  save(state: PlayerState): void {
    this.latest = state;
    if (this.dirty) return;
    this.dirty = true;
    this.writing = this.writing.then(() => new Promise<void>((resolve) => this.write(resolve)));
  }

  /** Keeps a stored value that could not be read (stored.ts), in turn with the saves: before anything is written over it. */
  keep(value: unknown, err: unknown): Promise<string> {
    const kept = this.writing
      .then(() => keepUnread(this.node.context(), this.store, value, err, Date.now()))
      .then((k) => {
        this.held ??= k.held;
        return k.text;
      });
    this.writing = kept.then(() => undefined);
    return kept;
  }

  private write(resolve: () => void): void {
    const { node, store } = this;
    this.dirty = false;
    if (this.held) {
      if (!this.heldWarned) node.warn(`schedule not saved: ${this.held}`);
      this.heldWarned = true;
      return resolve();
    }
    try {
      node.context().set(STATE_KEY, savedForm(this.latest!, Date.now()), store, (err) => {
        if (err)
          node.warn(
            `schedule not saved in context store ${store ?? 'default'}: ${err instanceof Error ? err.message : String(err)}`,
          );
        resolve();
      });
    } catch (err) {
      node.warn(`schedule not saved: ${(err as Error).message}`);
      resolve();
    }
  }
}
