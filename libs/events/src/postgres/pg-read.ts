import { ChainWalker, type WalkOptions } from '../chain-walker';
import { ChainError, type ScanProgress } from '../event-store';
import { TABLE, type PgClient } from './pg-connection';

export type PgRow = { seq: string; at: Date; type: string; actor: string; record: string };

const PAGE = 5000;

/** The head of a record as the relay encodes it: seq, id, at, type, actor (what the SQL columns copy). */
const HEAD_RE = /^\{"seq":(\d+),"id":"(?:[^"\\]|\\.)*","at":("(?:[^"\\]|\\.)*"),"type":("(?:[^"\\]|\\.)*"),"actor":("(?:[^"\\]|\\.)*"),"data":/;

/**
 * The columns auditors query must say what the record says: an UPDATE of `type` or `at` alone leaves
 * the chain intact, so it is checked here. Returns why a row disagrees, or null.
 */
export function columnsDisagree(row: PgRow): string | null {
  const m = HEAD_RE.exec(row.record);
  if (!m) return 'malformed record';
  if (m[1] !== String(row.seq)) return `the row's seq column says ${row.seq}`;
  if (Date.parse(JSON.parse(m[2]) as string) !== row.at.getTime()) return 'the at column does not match the record';
  if (JSON.parse(m[3]) !== row.type) return 'the type column does not match the record';
  if (JSON.parse(m[4]) !== row.actor) return 'the actor column does not match the record';
  return null;
}

/** The SQL columns of a record, read from its head (for a copy into a database). */
export function columnsOf(record: string): { seq: number; at: string; type: string; actor: string } {
  const m = HEAD_RE.exec(record);
  if (!m) throw new ChainError(0, TABLE.events, 'malformed record');
  const at = JSON.parse(m[2]) as string;
  if (Number.isNaN(Date.parse(at))) throw new ChainError(Number(m[1]), TABLE.events, `the record's time "${at.slice(0, 40)}" is not a time`);
  return { seq: Number(m[1]), at, type: JSON.parse(m[3]) as string, actor: JSON.parse(m[4]) as string };
}

export function missingHeadRecords(firstSeq: number): string {
  return `the log does not start at seq 1: its first record is seq ${firstSeq}, so the records before it are missing`;
}

export type PgWalk = { lastSeq: number; lastHash: string; records: number };

/**
 * Reads and proves a database log the way `scanLog` proves a directory (the same ChainWalker), in seq
 * order, a page at a time. It stops at the last seq that was committed when it began, so a walk beside a
 * running relay ends. Throws ChainError.
 */
export async function walkPgLog(client: PgClient, opts: WalkOptions & { onProgress?: (p: ScanProgress) => void }): Promise<PgWalk> {
  const bounds = await client.query<{ lo: string | null; hi: string | null }>(`SELECT min(seq) AS lo, max(seq) AS hi FROM ${TABLE.events}`);
  const lo = bounds.rows[0].lo === null ? null : Number(bounds.rows[0].lo);
  const hi = bounds.rows[0].hi === null ? 0 : Number(bounds.rows[0].hi);
  if (lo !== null && lo !== 1) throw new ChainError(1, TABLE.events, missingHeadRecords(lo));
  // From the record before the snapshot's first, so the snapshot's hash is checked against it.
  const anchor = Math.max(1, opts.fromSeq - 1);
  if (opts.fromSeq > 1 && hi < opts.fromSeq - 1) {
    throw new ChainError(opts.fromSeq - 1, '(snapshot)', `the log ends at seq ${hi}, before the snapshot`);
  }
  const walker = new ChainWalker(opts, hi === 0 ? 1 : anchor);
  let records = 0;
  const total = Math.max(0, hi - anchor + 1);
  for (let from = anchor; from <= hi;) {
    const page = await client.query<PgRow>({
      name: 'svc-walk-page',
      text: `SELECT seq, at, type, actor, record FROM ${TABLE.events} WHERE seq >= $1 AND seq <= $2 ORDER BY seq LIMIT ${PAGE}`,
      values: [from, hi],
    });
    if (page.rows.length === 0) throw new ChainError(walker.next, TABLE.events, `expected seq ${walker.next}: the log ends at seq ${walker.lastSeq}`);
    for (const row of page.rows) {
      walker.record(row.record, TABLE.events);
      const disagree = columnsDisagree(row);
      if (disagree) throw new ChainError(Number(row.seq), TABLE.events, disagree);
      records++;
    }
    from = Number(page.rows[page.rows.length - 1].seq) + 1;
    opts.onProgress?.({ done: records, total, seq: walker.lastSeq });
  }
  walker.finish();
  return { lastSeq: walker.lastSeq, lastHash: walker.lastHash, records };
}
