import { ChainWalker } from '../chain-walker';
import type { StoredEvent } from '../event';
import { ChainError } from '../event-store';
import { connectPg, pgReason, TABLE, type PgClient } from './pg-connection';
import { APPEND_CHANNEL } from './pg-event-store';
import { readLeader } from './pg-leader';
import { columnsDisagree, pageQuery, type PgRow } from './pg-read';

export type FollowOptions = {
  url: string;
  /** How often the log is read when no notification arrived (notifications are a hint; a lost one costs this much). */
  pollMs: number;
  /** Where this relay's read models are: the last record applied and its hash. */
  from: { seq: number; hash: string };
  /** Applies records in seq order (the read models); awaited before the next read. */
  onBatch: (events: StoredEvent[]) => Promise<void>;
  /** The log cannot be followed (a broken chain, rows pruned past this standby). */
  onError: (err: Error) => void;
  /** After each read that reached the end of the log (the standby's member row: pg-members.ts). */
  afterRead?: (client: PgClient) => Promise<void>;
  now?: () => number;
};

const PAGE = 1000;

/**
 * A standby's view of the leader's log: LISTEN on the append channel wakes it at once, a timer every
 * `pollMs` reads anyway, and every read goes by seq from the last record applied, proving each record
 * and its link as start-up does. Never writes.
 */
export class PgFollower {
  lastSeq: number;
  lastHash: string;
  /** The highest seq seen committed (the notification's payload, or the last read). */
  headSeq: number;
  /** When a read last reached the end of the log (what the read models' age is bounded by). */
  caughtUpAt: number;
  /** The leader's epoch as last read (null: no relay of this version has led the log yet). */
  leaderEpoch: number | null = null;
  private client: PgClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly opts: FollowOptions) {
    this.lastSeq = opts.from.seq;
    this.lastHash = opts.from.hash;
    this.headSeq = opts.from.seq;
    this.now = opts.now ?? Date.now;
    this.caughtUpAt = this.now();
  }

  async start(): Promise<void> {
    this.client = await this.connect();
    this.timer = setInterval(() => this.kick(), Math.max(50, this.opts.pollMs));
    this.timer.unref();
    // The first read is awaited: a standby says it is up once it has caught up (and knows the epoch).
    this.kick();
    await this.reading;
  }

  /** Records behind the head seen, and milliseconds since a read last reached the end. */
  lag(): { records: number; ms: number } {
    return { records: Math.max(0, this.headSeq - this.lastSeq), ms: Math.max(0, this.now() - this.caughtUpAt) };
  }

  /** Stops following (a read in flight finishes first); the connection is closed. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reading;
    const c = this.client;
    this.client = null;
    if (c) await c.end().catch(() => undefined);
  }

  /** Reads to the end of the log on `client` (the takeover's, under the writer's lock: nothing more can come). */
  async catchUp(client: PgClient): Promise<void> {
    await this.reading;
    while (await this.readPage(client)) {
      /* every page is applied before the next is read */
    }
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readAll().finally(() => {
      this.reading = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async readAll(): Promise<void> {
    try {
      this.client ??= await this.connect();
      this.leaderEpoch = (await readLeader(this.client))?.epoch ?? null;
      while (!this.stopped && (await this.readPage(this.client))) {
        /* next page */
      }
      if (!this.stopped) await this.opts.afterRead?.(this.client);
    } catch (err) {
      if (err instanceof ChainError) {
        this.stopped = true;
        this.opts.onError(err);
      }
      // Otherwise the database is unreachable for now: the next tick tries again.
    }
  }

  /** One page after the last record applied; false when the log had nothing newer. */
  private async readPage(client: PgClient): Promise<boolean> {
    // The record already applied is read again: its hash must be the one this relay holds (a rewritten
    // or pruned-past log is refused, never applied on top of).
    const anchor = Math.max(1, this.lastSeq);
    const rows = (await client.query<PgRow>(pageQuery(anchor, anchor + PAGE))).rows;
    if (this.lastSeq > 0 && (rows.length === 0 || Number(rows[0].seq) !== this.lastSeq)) {
      throw new ChainError(this.lastSeq, TABLE.events, 'the record this standby applied last is gone (the log was pruned or replaced): restart it');
    }
    const fresh: StoredEvent[] = [];
    const walker = new ChainWalker(
      { fromSeq: this.lastSeq + 1, expectPrev: this.lastSeq > 0 ? this.lastHash : undefined, onEvent: (e) => fresh.push(e) },
      anchor,
    );
    for (const row of rows) {
      walker.record(row.record, TABLE.events);
      const disagree = columnsDisagree(row);
      if (disagree) throw new ChainError(Number(row.seq), TABLE.events, disagree);
    }
    if (fresh.length === 0) {
      this.caughtUpAt = this.now();
      this.headSeq = Math.max(this.headSeq, this.lastSeq);
      return false;
    }
    await this.opts.onBatch(fresh);
    this.lastSeq = walker.lastSeq;
    this.lastHash = walker.lastHash;
    this.headSeq = Math.max(this.headSeq, this.lastSeq);
    return true;
  }

  private async connect(): Promise<PgClient> {
    const client = await connectPg(this.opts.url, 'standby');
    // A lost connection is made again by the next tick (reads need no lock).
    client.on('error', () => this.dropClient(client));
    client.on('notification', (n) => {
      const seq = Number(n.payload);
      if (Number.isSafeInteger(seq) && seq > this.headSeq) this.headSeq = seq;
      this.kick();
    });
    await client.query(`LISTEN ${APPEND_CHANNEL}`).catch((err: unknown) => {
      throw new Error(`LISTEN failed: ${pgReason(err)}`);
    });
    return client;
  }

  private dropClient(c: PgClient): void {
    if (this.client === c) this.client = null;
    void c.end().catch(() => undefined);
  }
}
