import {
  ChainError,
  type ChainWalker,
  columnsDisagree,
  matchesEventLog,
  pageQuery,
  TABLE,
  type EventLogFilter,
  type PgLogSource,
  type PgRow,
  type StoredRelayEvent,
  withoutPersonal,
} from '@svc/events';
import type { ChainStatus } from '@svc/console-api';
import { brokenStatus, headWalker, verifiedStatus } from './chain-monitor';
import { EventRing, parse, type Page } from './event-history';

/** Where a walk of the table goes on: the walker's next seq, or for a fresh walk the table's first row (seq 1, or the one after a cut). */
export async function nextRowSeq(c: Awaited<ReturnType<PgLogSource['connection']>>, walker: ChainWalker): Promise<number> {
  if (walker.next !== -1) return walker.next;
  const r = await c.query<{ lo: string | null }>(`SELECT min(seq) AS lo FROM ${TABLE.events}`);
  return r.rows[0].lo === null ? 1 : Number(r.rows[0].lo);
}

const PAGE = 500;

/**
 * The console's event history when the log is in PostgreSQL: the same ring of the newest events fed by
 * the bus, and anything older read from the table by seq (an index range scan, a page at a time). Like
 * the file history, it never returns an event past `durableSeq()`.
 */
export class PgEventHistory {
  private readonly ring: EventRing;

  constructor(
    private readonly source: PgLogSource,
    private readonly durableSeq: () => number,
    capacity = 5000,
  ) {
    this.ring = new EventRing(capacity);
  }

  async seed(): Promise<void> {
    const c = await this.source.connection();
    const r = await c.query<{ record: string }>(
      `SELECT record FROM ${TABLE.events} WHERE seq <= $1::bigint AND seq > $1::bigint - $2::bigint ORDER BY seq`,
      [this.durableSeq(), this.ring.capacity],
    );
    this.ring.events = r.rows.map((row) => parse(row.record)).filter((e): e is StoredRelayEvent => e !== null);
  }

  push(e: StoredRelayEvent): void {
    this.ring.push(withoutPersonal(e));
  }

  newest(n: number): StoredRelayEvent[] {
    return this.ring.newest(n);
  }

  /** Events with seq > after, oldest first. */
  async after(after: number, limit: number, filter: EventLogFilter = {}): Promise<Page> {
    const upTo = this.durableSeq();
    const out: StoredRelayEvent[] = [];
    const ringStart = this.ring.start;
    let next = after + 1;
    // Older than the ring: from the table, up to the ring's first seq.
    while (next < Math.min(ringStart, upTo + 1)) {
      const rows = await this.rows(`seq >= $1 AND seq < $2 ORDER BY seq`, [next, Math.min(ringStart, upTo + 1, next + PAGE)]);
      if (rows.length === 0) {
        next += PAGE; // a gap (the chain check reports it)
        continue;
      }
      for (const e of rows) {
        next = e.seq + 1;
        if (!matchesEventLog(e, filter)) continue;
        if (out.length === limit) return { events: out, more: true };
        out.push(e);
      }
    }
    for (const e of this.ring.events) {
      if (e.seq < next || e.seq > upTo || !matchesEventLog(e, filter)) continue;
      if (out.length === limit) return { events: out, more: true };
      out.push(e);
    }
    return { events: out, more: false };
  }

  /** Events with seq < before (default: all), newest first. */
  async before(before: number | undefined, limit: number, filter: EventLogFilter = {}): Promise<Page> {
    const bound = Math.min(before ?? Infinity, this.durableSeq() + 1);
    const out: StoredRelayEvent[] = [];
    for (let i = this.ring.events.length - 1; i >= 0; i--) {
      const e = this.ring.events[i];
      if (e.seq >= bound || !matchesEventLog(e, filter)) continue;
      if (out.length === limit) return { events: out, more: true };
      out.push(e);
    }
    let cursor = Math.min(this.ring.start, bound);
    while (cursor > 1) {
      const rows = await this.rows(`seq < $1 AND seq >= $2 ORDER BY seq DESC`, [cursor, cursor - PAGE]);
      if (rows.length === 0) {
        cursor -= PAGE;
        continue;
      }
      for (const e of rows) {
        cursor = e.seq;
        if (!matchesEventLog(e, filter)) continue;
        if (out.length === limit) return { events: out, more: true };
        out.push(e);
      }
    }
    return { events: out, more: false };
  }

  private async rows(where: string, values: unknown[]): Promise<StoredRelayEvent[]> {
    const c = await this.source.connection();
    // Bounded seq ranges, never an open range with a LIMIT (see pageQuery).
    const r = await c.query<{ record: string }>(`SELECT record FROM ${TABLE.events} WHERE ${where}`, values);
    return r.rows.map((row) => parse(row.record)).filter((e): e is StoredRelayEvent => e !== null);
  }
}

/**
 * The chain check of a database log, incremental like the file monitor: each check reads only the rows
 * committed since the last one, proves them with the same ChainWalker, and checks the SQL columns
 * against each record. Once broken it stays broken until a full re-check.
 */
export class PgChainMonitor {
  private walker = headWalker();
  private status: ChainStatus | null = null;
  private running: Promise<ChainStatus> | null = null;

  constructor(
    private readonly source: PgLogSource,
    private readonly durableSeq: () => number,
    private readonly nowMs: () => number,
  ) {}

  reset(): void {
    this.walker = headWalker();
    this.status = null;
  }

  /** A full check found a break: it stays until reset, as one found here would. */
  adopt(status: ChainStatus & { state: 'broken' }): void {
    this.status = status;
  }

  check(force = false): Promise<ChainStatus> {
    if (this.status?.state === 'broken' && !force) return Promise.resolve(this.status);
    this.running ??= this.walk().finally(() => (this.running = null));
    return this.running;
  }

  private async walk(): Promise<ChainStatus> {
    const c = await this.source.connection();
    const upTo = this.durableSeq();
    const walker = this.walker;
    try {
      for (let from = await nextRowSeq(c, walker); from <= upTo; from = walker.next) {
        const r = await c.query<PgRow>(pageQuery(from, upTo));
        if (r.rows.length === 0) throw new ChainError(from, TABLE.events, `expected seq ${from}: it is missing`);
        for (const row of r.rows) {
          walker.record(row.record, TABLE.events);
          const disagree = columnsDisagree(row);
          if (disagree) throw new ChainError(Number(row.seq), TABLE.events, disagree);
        }
      }
      walker.finish();
    } catch (err) {
      if (!(err instanceof ChainError)) throw err;
      this.status = brokenStatus(err, this.nowMs());
      return this.status;
    }
    this.status = verifiedStatus(walker, this.nowMs());
    return this.status;
  }
}
