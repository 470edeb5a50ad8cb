import * as fs from 'node:fs';
import * as path from 'node:path';
import { segmentName } from '../file/file-read';
import { TABLE, type PgClient } from './pg-connection';

/** A planned cut of a database log: every row up to `cutSeq` goes (none newer than the snapshot). */
export type PgPrunePlan = { cutSeq: number; cutHash: string; cutAt: string; firstSeq: number; records: number; bytes: number };

/**
 * Where a database log can be cut: the newest row before the time (or seq) that no snapshot still needs,
 * i.e. not past `snapshotSeq`, and past the log's current head. Null: nothing can go.
 */
export async function planPgPrune(
  c: PgClient,
  cut: { before: Date; snapshotSeq: number } | { beforeSeq: number; snapshotSeq: number },
): Promise<PgPrunePlan | null> {
  const bound =
    'before' in cut
      ? await c.query<{ s: string | null }>(`SELECT max(seq) AS s FROM ${TABLE.events} WHERE at < $1 AND seq <= $2`, [
          cut.before.toISOString(),
          cut.snapshotSeq,
        ])
      : await c.query<{ s: string | null }>(`SELECT max(seq) AS s FROM ${TABLE.events} WHERE seq < $1 AND seq <= $2`, [
          cut.beforeSeq,
          cut.snapshotSeq,
        ]);
  if (bound.rows[0].s === null) return null;
  const cutSeq = Number(bound.rows[0].s);
  const r = await c.query<{ lo: string; n: string; bytes: string; record: string }>(
    `SELECT (SELECT min(seq) FROM ${TABLE.events}) AS lo, count(*) AS n, coalesce(sum(octet_length(record) + 1), 0) AS bytes,
       (SELECT record FROM ${TABLE.events} WHERE seq = $1) AS record
     FROM ${TABLE.events} WHERE seq <= $1`,
    [cutSeq],
  );
  const row = r.rows[0];
  if (Number(row.n) === 0 || row.record === null) return null;
  const rec = JSON.parse(row.record) as { hash: string; at: string };
  return { cutSeq, cutHash: rec.hash, cutAt: rec.at, firstSeq: Number(row.lo), records: Number(row.n), bytes: Number(row.bytes) };
}

/**
 * Writes the rows a plan drops as one segment file in `dir` (the file log's name and format, so `verify
 * --archive` and the file tools read it), fsynced with its folder, before any row is deleted. Written to a
 * temporary name first: a crash leaves no half segment under the real one. Returns the file's name.
 */
export async function archivePgRows(c: PgClient, plan: PgPrunePlan, dir: string): Promise<string> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = segmentName(plan.firstSeq);
  const tmp = path.join(dir, `.${name}.tmp`);
  const fh = await fs.promises.open(tmp, 'w', 0o600);
  try {
    for (let from = plan.firstSeq; from <= plan.cutSeq; from += 5000) {
      const r = await c.query<{ record: string }>(`SELECT record FROM ${TABLE.events} WHERE seq >= $1 AND seq <= $2 ORDER BY seq`, [
        from,
        Math.min(plan.cutSeq, from + 4999),
      ]);
      if (r.rows.length) await fh.write(r.rows.map((x) => x.record + '\n').join(''));
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.promises.rename(tmp, path.join(dir, name));
  const d = await fs.promises.open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
  return name;
}

/**
 * The statement that drops a cut's rows, run in the transaction that appends the `log.pruned` record
 * naming it (PgEventStore.writeBatch): the record and the deletion commit together or not at all.
 */
export const DELETE_CUT_SQL = `DELETE FROM ${TABLE.events} WHERE seq <= $1`;

/** The cut a batch's `log.pruned` record names, if it holds one. */
export function cutOfBatch(events: ReadonlyArray<{ type: string; data: unknown }>): number | null {
  for (const e of events) {
    const cutSeq = e.type === 'log.pruned' ? (e.data as { cutSeq?: unknown } | null)?.cutSeq : undefined;
    if (Number.isSafeInteger(cutSeq)) return cutSeq as number;
  }
  return null;
}
