import * as os from 'node:os';
import { TABLE, type PgClient } from './pg-connection';

/**
 * Leader epochs (Kafka's controller epoch, Raft's term): the relay that takes the writer's lock raises the
 * one-row epoch, and every append checks it in its own statement. A leader whose session survived its
 * lock (it cannot today: the lock is the session's) or that reached the database again by another path
 * still writes nothing once a newer leader raised the epoch.
 */

/** Thrown by an append whose epoch is no longer the database's: a newer leader took over. */
export class PgFencedError extends Error {
  constructor(
    readonly mine: number,
    readonly current: number | null,
  ) {
    super(`this relay no longer leads the event log: its epoch is ${mine}, the database's is ${current ?? 'unknown'}`);
    this.name = 'PgFencedError';
  }
}

/** Who leads, as the leader row and `relay.leader_changed` name it. */
export function holderName(): string {
  return `pid ${process.pid} on ${os.hostname()}`;
}

/** Raises the epoch (the caller holds the writer's lock and has migrated): the new leader's term. */
export async function claimEpoch(client: PgClient, holder: string): Promise<number> {
  const r = await client.query<{ epoch: string }>(
    `UPDATE ${TABLE.leader} SET epoch = epoch + 1, holder = $1, since = now() WHERE id = 1 RETURNING epoch`,
    [holder.slice(0, 200)],
  );
  if (!r.rows[0]) throw new Error(`${TABLE.leader} has no row: the schema was not migrated`);
  return Number(r.rows[0].epoch);
}

export type PgLeaderRow = { epoch: number; holder: string | null; since: string | null };

/** The current epoch and who holds it (null: a database no relay of this version has led). */
export async function readLeader(client: PgClient): Promise<PgLeaderRow | null> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [TABLE.leader]);
  if (!exists.rows[0]?.t) return null;
  const r = await client.query<{ epoch: string; holder: string | null; since: Date | null }>(
    `SELECT epoch, holder, since FROM ${TABLE.leader} WHERE id = 1`,
  );
  const row = r.rows[0];
  return row ? { epoch: Number(row.epoch), holder: row.holder, since: row.since ? row.since.toISOString() : null } : null;
}

/**
 * Bounds how long a leader that stopped answering (frozen, partitioned, its machine gone without a FIN)
 * keeps the lock: the server ends the writer's session once it sat idle for `leaseMs` (in or out of a
 * transaction), which releases the advisory lock; the leader keeps its session busy with a heartbeat
 * every third of that. TCP keepalives on the server's side notice a dead peer machine sooner.
 */
export async function startLease(client: PgClient, leaseMs: number): Promise<void> {
  const ms = Math.max(1000, Math.floor(leaseMs));
  const keepaliveS = Math.max(1, Math.floor(ms / 3000));
  // SET takes no parameters: the values are integers built here.
  await client.query(
    `SET idle_session_timeout = ${ms}; SET idle_in_transaction_session_timeout = ${ms}; ` +
      `SET tcp_keepalives_idle = ${keepaliveS}; SET tcp_keepalives_interval = ${keepaliveS}; SET tcp_keepalives_count = 3`,
  );
}

/** The heartbeat's query: keeps the session from going idle, and says whether this relay still leads. */
export async function heartbeat(client: PgClient, epoch: number): Promise<void> {
  const r = await client.query<{ epoch: string }>(`SELECT epoch FROM ${TABLE.leader} WHERE id = 1`);
  const current = r.rows[0] ? Number(r.rows[0].epoch) : null;
  if (current !== epoch) throw new PgFencedError(epoch, current);
}
