import type { NewEvent, StoredEvent } from './event';

/** Thrown when the log cannot be trusted: an edited, removed or reordered record. */
export class ChainError extends Error {
  constructor(
    readonly seq: number,
    readonly segment: string,
    readonly reason: string,
  ) {
    super(`event log broken at seq ${seq} (${segment}): ${reason}`);
    this.name = 'ChainError';
  }
}

/** What a `log.pruned` record says (the last dropped record's seq, hash and time), and the seq of that record. */
export type RecordedCut = { cutSeq: number; cutHash: string; cutAt: string; recordedAt: number };

/**
 * Where a long scan is: how much it has read of what it will read (bytes of a file log, records of a
 * database log: only the ratio means anything), and the last seq it checked.
 */
export type ScanProgress = { done: number; total: number; seq: number };

export type OpenOptions = {
  /** Replay from this seq on (a snapshot covers the ones before). */
  fromSeq: number;
  /** The hash of record `fromSeq - 1`, to link the chain to a snapshot. */
  expectPrev?: string;
  onEvent: (event: StoredEvent) => void;
  /** Called as the scan reads the log (once per 1 MiB read), for start-up progress. */
  onProgress?: (progress: ScanProgress) => void;
};

export type OpenResult = {
  lastSeq: number;
  lastHash: string;
  /** Set when a torn last line (an interrupted write) was cut off. */
  recovered?: { segment: string; droppedBytes: number };
  /** Set when the log's lock was left by a writer that did not stop (and was taken over); nulls: the lock file was unreadable. */
  staleLock?: { pid: number | null; since: string | null };
  /** Set when the log starts at a recorded cut (pruned) instead of seq 1. */
  cut?: RecordedCut;
};

export type Appended = { stored: StoredEvent[]; durable: Promise<void> };

/**
 * The port the relay writes through. `append` stamps seq and hashes at once (so the next decision sees
 * them) and resolves `durable` after the record is on disk; durable batches are reported in seq order
 * through the `onDurable` callback given at construction.
 */
export interface EventStore {
  open(options: OpenOptions): Promise<OpenResult>;
  append(events: readonly NewEvent[], at: string, defaultActor: string): Appended;
  readonly lastSeq: number;
  /** Which adapter this is (the metrics label it). */
  readonly kind: 'file' | 'postgres';
  /** Where the log is, fit for a log line (a directory, or a database URL without its password). */
  readonly location: string;
  /** Resolves when everything appended so far is durable. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** The read models as of record `seq` (whose hash is `hash`): start-up replays only what came after. */
export type Snapshot<M = unknown> = { seq: number; hash: string; at: string; models: M };

/**
 * Where projection snapshots live (beside the log: files in the relay directory, or a table in the
 * log's database). Each carries a MAC under the install's key; `latest` skips one that fails it.
 * `write` serializes the snapshot before it returns (the models may move on while it is stored).
 */
export interface SnapshotPort {
  latest<M>(): Promise<Snapshot<M> | null>;
  write<M>(snapshot: Snapshot<M>): Promise<void>;
  /** Removes every snapshot (a forgetting: none may keep content whose key it destroyed). */
  clear(): Promise<void>;
  /** Lets go of what it holds open (a database connection); the file store holds nothing. */
  close?(): Promise<void>;
}
