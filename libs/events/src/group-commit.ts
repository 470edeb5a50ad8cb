import { stampRecords } from './chain';
import { GENESIS_HASH, type NewEvent, type StoredEvent } from './event';
import type { Appended } from './event-store';

type Waiter = { resolve: () => void; reject: (e: Error) => void };

/** The records gathered for one durable write, and who waits for it. */
export type Batch = { lines: string[]; events: StoredEvent[]; waiters: Waiter[] };

export type GroupCommitHooks = {
  onDurable: (events: readonly StoredEvent[]) => void;
  /** The store can no longer write (the relay must stop: state ran ahead of the log). */
  onFatal?: (error: Error) => void;
};

/**
 * Group commit, the same for every store: `append` stamps seq and hashes at once (so the next decision
 * sees them) and adds the records to the batch being gathered; one batch is written at a time, and what
 * arrives meanwhile forms the next. Durable batches are reported in seq order. A failed write fails the
 * store for good: every waiter is rejected and `onFatal` is told.
 */
export abstract class GroupCommitStore {
  protected seq = 0;
  protected hash = GENESIS_HASH;
  protected failed: Error | null = null;
  private pending: Batch | null = null;
  private flushing: Promise<void> | null = null;

  constructor(private readonly hooks: GroupCommitHooks) {}

  get lastSeq(): number {
    return this.seq;
  }

  /** Whether the store is open for appends. */
  protected abstract get writable(): boolean;

  /** Makes one batch durable; a throw fails the store (the message says what failed). */
  protected abstract writeBatch(batch: Batch): Promise<void>;

  /** After a batch is durable and its waiters told (the file store rotates its segment here). */
  protected afterBatch(_written: Batch): void {}

  append(events: readonly NewEvent[], at: string, defaultActor: string): Appended {
    if (this.failed) return { stored: [], durable: Promise.reject(this.failed) };
    if (!this.writable) throw new Error('event store is not open');
    const { stored, lines, seq, hash } = stampRecords(events, at, defaultActor, { seq: this.seq, hash: this.hash });
    this.seq = seq;
    this.hash = hash;
    const batch = (this.pending ??= { lines: [], events: [], waiters: [] });
    batch.lines.push(...lines);
    batch.events.push(...stored);
    const durable = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
    this.flushing ??= this.flushLoop();
    return { stored, durable };
  }

  /** Resolves when everything appended so far is durable. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failed) throw this.failed;
  }

  private async flushLoop(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.pending && !this.failed) {
        const batch = this.pending;
        this.pending = null;
        try {
          await this.writeBatch(batch);
        } catch (err) {
          this.fail(err as Error, batch);
          return;
        }
        this.hooks.onDurable(batch.events);
        for (const w of batch.waiters) w.resolve();
        this.afterBatch(batch);
      }
    } finally {
      this.flushing = null;
    }
  }

  /** Fails the store: the batch in hand and every one gathered after it are rejected with `err`. */
  protected fail(err: Error, batch: Batch | null): void {
    if (this.failed) return;
    this.failed = err;
    for (const w of batch?.waiters ?? []) w.reject(err);
    for (const w of this.pending?.waiters ?? []) w.reject(err);
    this.pending = null;
    this.hooks.onFatal?.(err);
  }
}
