import { TABLE, type PgClient } from './pg-connection';

/**
 * The relays on one database (issue 38: the console shows both relays, their roles, epochs and lag). Each
 * relay home keeps one row, written by the leader's heartbeat and by a standby's follow loop; `seen_at` is
 * the writing relay's clock (the one it decides expiry on). Not an event: liveness, like a heartbeat.
 */
export type PgMember = {
  /** One per relay home (pg-members' caller derives it from the host and the home's directory). */
  id: string;
  name: string;
  /** Where it serves, once it listens (null before). */
  url: string | null;
  role: 'leader' | 'standby';
  epoch: number | null;
  /** The last record it applied (a leader: its durable head). */
  seq: number;
  /** Records behind the head it saw, and ms since it was last caught up (a leader: 0). */
  lagRecords: number;
  lagMs: number;
  /** ms since the epoch, on the writing relay's clock. */
  seenAt: number;
};

// Rows are small and few; these bound what a hostile or broken writer could make the console show.
const MAX_TEXT = 200;
const MAX_ROWS = 32;

const UPSERT_SQL = `INSERT INTO ${TABLE.members} (id, name, url, role, epoch, seq, lag_records, lag_ms, seen_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9::double precision / 1000))
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, url = EXCLUDED.url, role = EXCLUDED.role, epoch = EXCLUDED.epoch,
  seq = EXCLUDED.seq, lag_records = EXCLUDED.lag_records, lag_ms = EXCLUDED.lag_ms, seen_at = EXCLUDED.seen_at`;

/** Writes this relay's row (one statement; a database without the table yet is the caller's to ignore). */
export async function reportMember(client: PgClient, m: PgMember): Promise<void> {
  await client.query(UPSERT_SQL, [
    m.id.slice(0, MAX_TEXT),
    m.name.slice(0, MAX_TEXT),
    m.url ? m.url.slice(0, MAX_TEXT) : null,
    m.role,
    m.epoch,
    m.seq,
    m.lagRecords,
    Math.round(m.lagMs),
    m.seenAt,
  ]);
}

/** Drops rows not written since `before` (ms): a relay home gone for good (the leader does it, on its clock). */
export async function forgetMembers(client: PgClient, before: number): Promise<number> {
  const r = await client.query(`DELETE FROM ${TABLE.members} WHERE seen_at < to_timestamp($1::double precision / 1000)`, [before]);
  return r.rowCount ?? 0;
}

/** Every relay's row, the leader first, then by name (bounded). */
export async function listMembers(client: PgClient): Promise<PgMember[]> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [TABLE.members]);
  if (!exists.rows[0]?.t) return [];
  const r = await client.query<{
    id: string;
    name: string;
    url: string | null;
    role: string;
    epoch: string | null;
    seq: string;
    lag_records: string;
    lag_ms: string;
    seen_ms: string;
  }>(
    `SELECT id, name, url, role, epoch, seq, lag_records, lag_ms, (extract(epoch FROM seen_at) * 1000)::bigint AS seen_ms
     FROM ${TABLE.members} ORDER BY (role = 'leader') DESC, epoch DESC NULLS LAST, name LIMIT ${MAX_ROWS}`,
  );
  return r.rows.map((row) => ({
    id: row.id,
    name: row.name,
    url: row.url,
    role: row.role === 'leader' ? 'leader' : 'standby',
    epoch: row.epoch === null ? null : Number(row.epoch),
    seq: Number(row.seq),
    lagRecords: Number(row.lag_records),
    lagMs: Number(row.lag_ms),
    seenAt: Number(row.seen_ms),
  }));
}

/** Who this relay is for svc_relay_members, and the relay's clock (its rows' seen_at, and what the leader forgets by). */
export type MemberSource = { id: string; name: string; url: () => string | null; now: () => number; forgetAfterMs: number };

/** Writes this relay's row; a leader also forgets rows not seen for `forgetAfterMs` on its own clock. */
export async function reportSelf(
  client: PgClient,
  m: MemberSource,
  state: { role: 'leader' | 'standby'; epoch: number | null; seq: number; lag: { records: number; ms: number } },
): Promise<void> {
  const now = m.now();
  await reportMember(client, {
    id: m.id,
    name: m.name,
    url: m.url(),
    role: state.role,
    epoch: state.epoch,
    seq: state.seq,
    lagRecords: state.lag.records,
    lagMs: state.lag.ms,
    seenAt: now,
  });
  if (state.role === 'leader') await forgetMembers(client, now - m.forgetAfterMs);
}

export type PgLeaderChange = { seq: number; at: string; epoch: number | null; previousEpoch: number | null; holder: string | null };

/** The newest takeovers (`relay.leader_changed`), newest first: by the type index (migration 2), bounded. */
export async function leaderHistory(client: PgClient, limit = 10): Promise<PgLeaderChange[]> {
  const r = await client.query<{ seq: string; at: Date; record: string }>(
    `SELECT seq, at, record FROM ${TABLE.events} WHERE type = 'relay.leader_changed' ORDER BY seq DESC LIMIT ${Math.min(50, Math.max(1, limit))}`,
  );
  return r.rows.map((row) => {
    // The record was proven when the log was walked; a field of the wrong type is shown as unknown.
    let data: Record<string, unknown> = {};
    try {
      data = ((JSON.parse(row.record) as { data?: Record<string, unknown> }).data ?? {}) as Record<string, unknown>;
    } catch {
      /* shown as unknown */
    }
    const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null);
    return {
      seq: Number(row.seq),
      at: row.at.toISOString(),
      epoch: num(data.epoch),
      previousEpoch: num(data.previousEpoch),
      holder: typeof data.holder === 'string' ? data.holder.slice(0, 200) : null,
    };
  });
}
