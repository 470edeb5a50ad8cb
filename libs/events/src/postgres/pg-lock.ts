import { TABLE, type PgClient } from './pg-connection';

/** The advisory lock's first key ('SVCR'); the second is the schema's, so two schemas hold two logs. */
const LOCK_CLASS = 0x53564352;
const SCHEMA_KEY = `hashtext(current_schema()) & 2147483647`;

export type PgLockHolder = { pid: number; application: string | null; client: string | null; since: string | null };

/** Thrown when another session holds the log's writer lock: a second relay must not write a record. */
export class PgLogLockedError extends Error {
  constructor(
    readonly location: string,
    readonly holder: PgLockHolder | null,
  ) {
    const who = holder
      ? `${holder.application || 'a session'} (database backend pid ${holder.pid}${holder.client ? ` from ${holder.client}` : ''}${holder.since ? `, connected since ${holder.since}` : ''})`
      : 'another session';
    super(`the event log in ${location} (${TABLE.events}) is in use by ${who}`);
    this.name = 'PgLogLockedError';
  }
}

/**
 * Takes the log's writer lock for this session's life: a session-level advisory lock, which the database
 * drops by itself when the session ends, however it ends, so no stale lock outlives a crashed relay.
 */
export async function takeWriterLock(client: PgClient, location: string): Promise<void> {
  if (await tryWriterLock(client)) return;
  throw new PgLogLockedError(location, await writerLockHolder(client));
}

/** One try for the writer lock (a standby asks again and again until the leader's session ends). */
export async function tryWriterLock(client: PgClient): Promise<boolean> {
  const r = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock($1, ${SCHEMA_KEY}) AS ok`, [LOCK_CLASS]);
  return r.rows[0]?.ok === true;
}

/**
 * The session holding this schema's writer lock (a running relay), or null. Advisory locks are
 * server-wide: the same keys in another database of the server are another relay's log (so the
 * database is part of the match, or a relay would be told it is locked out by its neighbour).
 */
export async function writerLockHolder(client: PgClient): Promise<PgLockHolder | null> {
  const r = await client.query<{ pid: number; application: string | null; client: string | null; since: Date | null }>(
    `SELECT a.pid, a.application_name AS application, host(a.client_addr) AS client, a.backend_start AS since
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = $1::bigint::oid AND l.objid = (${SCHEMA_KEY})::bigint::oid
      LIMIT 1`,
    [LOCK_CLASS],
  );
  const h = r.rows[0];
  return h ? { pid: h.pid, application: h.application, client: h.client, since: h.since ? h.since.toISOString() : null } : null;
}
