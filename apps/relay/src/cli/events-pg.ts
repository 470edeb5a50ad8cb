import { APPEND_CHANNEL, parseTypeSpecs, TABLE, typeSpecsSql, type PgLogSource } from '@svc/events';

/** The SQL for `--type`: the one rule of event-types-match.ts (`session`, `session.` and `session.*` take every `session.*`). */
function typeFilter(specs: string[], firstParam: number): { where: string; values: unknown[] } {
  const sql = typeSpecsSql(parseTypeSpecs(specs));
  if (sql === null) return { where: 'TRUE', values: [] };
  return { where: `(type = ANY($${firstParam}::text[]) OR type LIKE ANY($${firstParam + 1}::text[]))`, values: [sql.exact, sql.like] };
}

/** Prints the newest `limit` matching records (all with 0), oldest first; returns the last seq there is. */
export async function tailPg(source: PgLogSource, types: string[], limit: number, print: (text: string) => void): Promise<number> {
  const c = await source.connection();
  const top = await c.query<{ hi: string | null }>(`SELECT max(seq) AS hi FROM ${TABLE.events}`).catch(() => ({ rows: [{ hi: null }] }));
  const hi = Number(top.rows[0].hi ?? 0);
  if (hi === 0) return 0;
  const f = typeFilter(types, 2);
  if (limit > 0 && f.values.length === 0) {
    // Unfiltered: the newest `limit` seqs are a range.
    const r = await c.query<{ record: string }>(
      `SELECT record FROM ${TABLE.events} WHERE seq <= $1::bigint AND seq > $1::bigint - $2::bigint ORDER BY seq`,
      [hi, limit],
    );
    for (const row of r.rows) print(row.record);
    return hi;
  }
  if (limit > 0) {
    // Filtered: the (type, seq) index finds the newest of each type.
    const r = await c.query<{ record: string }>(
      `SELECT record FROM (SELECT seq, record FROM ${TABLE.events} WHERE seq <= $1 AND ${f.where} ORDER BY seq DESC LIMIT ${limit}) t ORDER BY seq`,
      [hi, ...f.values],
    );
    for (const row of r.rows) print(row.record);
    return hi;
  }
  // All of them, oldest first, by bounded seq ranges (see pageQuery).
  const g = typeFilter(types, 3);
  for (let from = 1; from <= hi; from += 5000) {
    const r = await c.query<{ record: string }>(`SELECT record FROM ${TABLE.events} WHERE seq >= $1 AND seq < $2 AND ${g.where} ORDER BY seq`, [
      from,
      Math.min(hi + 1, from + 5000),
      ...g.values,
    ]);
    for (const row of r.rows) print(row.record);
  }
  return hi;
}

/**
 * Hands over every record after `last` as it commits: woken by the writer's NOTIFY on each batch, with a
 * poll every second behind it (a notification can be missed across a reconnect).
 */
export async function followPg(
  source: PgLogSource,
  last: number,
  signal: AbortSignal | undefined,
  onRecord: (type: string, text: string) => void,
): Promise<void> {
  const c = await source.connection();
  let wake: (() => void) | null = null;
  c.on('notification', () => wake?.());
  await c.query(`LISTEN ${APPEND_CHANNEL}`);
  const stopped = new Promise<void>((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  while (!signal?.aborted) {
    const r = await c.query<{ seq: string; type: string; record: string }>(
      `SELECT seq, type, record FROM ${TABLE.events} WHERE seq > $1 AND seq <= $1 + 1000 ORDER BY seq`,
      [last],
    );
    for (const row of r.rows) {
      onRecord(row.type, row.record);
      last = Number(row.seq);
    }
    if (r.rows.length === 1000) continue;
    await Promise.race([stopped, new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, 1000)))]);
    wake = null;
  }
}
