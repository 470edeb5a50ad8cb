import { ChainWalker, type WalkOptions } from '../chain-walker';
import { ChainError, type RecordedCut, type ScanProgress } from '../event-store';
import { TABLE, type PgClient } from './pg-connection';

/** A row as the readers select it: `at` as epoch milliseconds (a Date per row costs more than the rest of the check). */
export type PgRow = { seq: string; at: string; type: string; actor: string; record: string };

/**
 * Rows in: seq, at, type and actor as arrays, the records as one JSON array of strings ($5). node-postgres
 * escapes a text[] element by element in JavaScript, which costs more than the insert for records full of
 * quotes; JSON.stringify is native (45% less time for a 100k-record import here).
 */
export const INSERT_ROWS = insertRows();

/** INSERT_ROWS with the writer's epoch ($6) on each row, inserted only `where` holds (the append's fence). */
export function insertRows(fenced?: { where: string }): string {
  return `INSERT INTO ${TABLE.events} (seq, at, type, actor, record${fenced ? ', epoch' : ''})
  SELECT c.seq, c.at, c.type, c.actor, r.record${fenced ? ', $6::bigint' : ''}
  FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[]) WITH ORDINALITY AS c(seq, at, type, actor, n)
  JOIN json_array_elements_text($5::json) WITH ORDINALITY AS r(record, n) USING (n)${
    fenced
      ? `
  WHERE ${fenced.where}`
      : ''
  }`;
}

/** The select list of PgRow. */
export const ROW_COLUMNS = `seq, (extract(epoch from at) * 1000)::bigint AS at, type, actor, record`;

const PAGE = 5000;

/** The head of a record as the relay encodes it: seq, id, at, type, actor (what the SQL columns copy). */
const HEAD_RE = /^\{"seq":(\d+),"id":"(?:[^"\\]|\\.)*","at":("(?:[^"\\]|\\.)*"),"type":("(?:[^"\\]|\\.)*"),"actor":("(?:[^"\\]|\\.)*"),"data":/;

/**
 * The columns auditors query must say what the record says: an UPDATE of `type` or `at` alone leaves
 * the chain intact, so it is checked here. Returns why a row disagrees, or null.
 */
export function columnsDisagree(row: PgRow): string | null {
  // The usual case in one search: the columns spelled as the relay writes them (at from toISOString).
  const ms = Number(row.at);
  const head = `{"seq":${row.seq},"id":"`;
  if (row.record.startsWith(head)) {
    const expected = `","at":"${new Date(ms).toISOString()}","type":${JSON.stringify(row.type)},"actor":${JSON.stringify(row.actor)},"data":`;
    const at = row.record.indexOf('","at":"', head.length);
    if (at > 0 && row.record.startsWith(expected, at) && row.record.lastIndexOf('"', at - 1) < head.length) return null;
  }
  const m = HEAD_RE.exec(row.record);
  if (!m) return 'malformed record';
  if (m[1] !== String(row.seq)) return `the row's seq column says ${row.seq}`;
  if (Date.parse(JSON.parse(m[2]) as string) !== ms) return 'the at column does not match the record';
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

/**
 * One page of rows by a bounded seq range. Seqs are consecutive, so a range of PAGE seqs is a page; a
 * LIMIT over an open range instead let the planner (with no statistics yet on a new table) read the whole
 * rest of the table and sort it for every page: 7x slower on 100k records.
 */
export function pageQuery(from: number, hi: number, pageSize = PAGE): { text: string; values: number[] } {
  return {
    text: `SELECT ${ROW_COLUMNS} FROM ${TABLE.events} WHERE seq >= $1 AND seq <= $2 ORDER BY seq`,
    values: [from, Math.min(hi, from + pageSize - 1)],
  };
}

export function missingHeadRecords(firstSeq: number): string {
  return `the log does not start at seq 1: its first record is seq ${firstSeq}, so the records before it are missing`;
}

export type PgWalk = { lastSeq: number; lastHash: string; records: number; cut?: RecordedCut };

/**
 * Reads and proves a database log the way `scanLog` proves a directory (the same ChainWalker), in seq
 * order, a page at a time. It stops at the last seq that was committed when it began, so a walk beside a
 * running relay ends. Throws ChainError.
 */
export async function walkPgLog(client: PgClient, opts: WalkOptions & { onProgress?: (p: ScanProgress) => void }): Promise<PgWalk> {
  const bounds = await client.query<{ lo: string | null; hi: string | null }>(`SELECT min(seq) AS lo, max(seq) AS hi FROM ${TABLE.events}`);
  const lo = bounds.rows[0].lo === null ? null : Number(bounds.rows[0].lo);
  const hi = bounds.rows[0].hi === null ? 0 : Number(bounds.rows[0].hi);
  // A log that starts after seq 1 (pruned) is walked whole from its first row: the record of its cut can lie
  // anywhere in it (ChainWalker's 'head' rule), as scanLog walks a pruned directory.
  const pruned = lo !== null && lo !== 1;
  // Otherwise from the record before the snapshot's first, so the snapshot's hash is checked against it.
  const anchor = pruned ? lo : Math.max(1, opts.fromSeq - 1);
  if (opts.fromSeq > 1 && hi < opts.fromSeq - 1) {
    throw new ChainError(opts.fromSeq - 1, '(snapshot)', `the log ends at seq ${hi}, before the snapshot`);
  }
  const walker = new ChainWalker(opts, pruned ? 'head' : hi === 0 ? 1 : anchor);
  let records = 0;
  const total = Math.max(0, hi - anchor + 1);
  const page = (from: number) => client.query<PgRow>(pageQuery(from, hi));
  // The next page is asked for before this one is checked: the server reads while this process hashes.
  let next = anchor <= hi ? page(anchor) : null;
  while (next) {
    const rows = (await next).rows;
    if (rows.length === 0) throw new ChainError(walker.next, TABLE.events, `expected seq ${walker.next}: the log ends at seq ${walker.lastSeq}`);
    const after = Number(rows[rows.length - 1].seq) + 1;
    next = after <= hi ? page(after) : null;
    try {
      for (const row of rows) {
        walker.record(row.record, TABLE.events);
        const disagree = columnsDisagree(row);
        if (disagree) throw new ChainError(Number(row.seq), TABLE.events, disagree);
        records++;
      }
    } catch (err) {
      // The page in flight is drained, not left to reject unobserved.
      await next?.catch(() => undefined);
      throw err;
    }
    opts.onProgress?.({ done: records, total, seq: walker.lastSeq });
  }
  walker.finish();
  return { lastSeq: walker.lastSeq, lastHash: walker.lastHash, records, ...(walker.startCut ? { cut: walker.startCut } : {}) };
}
