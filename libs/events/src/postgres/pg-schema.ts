import { TABLE, type PgClient } from './pg-connection';

/**
 * Versioned migrations, applied in order by the relay (inside one transaction each, under the writer's
 * lock): a database is created and brought up to date with no manual step. Never edit a released one;
 * add the next.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'the event log and projection snapshots',
    // `record` is the exact line the file log would hold (its checksum covers every field); seq, at, type
    // and actor are copies for SQL, which verification checks against the record.
    sql: `
      CREATE TABLE ${TABLE.events} (
        seq    bigint PRIMARY KEY CHECK (seq > 0),
        at     timestamptz NOT NULL,
        type   text NOT NULL,
        actor  text NOT NULL,
        record text NOT NULL
      );
      CREATE TABLE ${TABLE.snapshots} (
        seq  bigint PRIMARY KEY,
        at   timestamptz NOT NULL DEFAULT now(),
        body text NOT NULL,
        mac  text NOT NULL
      );`,
  },
  {
    version: 2,
    name: 'auditor access: an index by type, and the records as jsonb',
    sql: `
      CREATE INDEX ${TABLE.events}_type_seq ON ${TABLE.events} (type, seq);
      CREATE VIEW ${TABLE.events}_json AS
        SELECT seq, at, type, actor, (record::jsonb) -> 'data' AS data, (record::jsonb) ->> 'hash' AS hash
        FROM ${TABLE.events};`,
  },
  {
    version: 3,
    name: 'leader epochs: the fence every append checks, and the epoch of each row',
    // One row: the epoch of the relay allowed to append (a standby that takes over raises it). `epoch` on a
    // row says which leader wrote it (null: written before epochs, or imported); it is outside the record,
    // so the chain and every export are unchanged.
    sql: `
      CREATE TABLE ${TABLE.leader} (
        id     smallint PRIMARY KEY CHECK (id = 1),
        epoch  bigint NOT NULL,
        holder text,
        since  timestamptz
      );
      INSERT INTO ${TABLE.leader} (id, epoch) VALUES (1, 0);
      ALTER TABLE ${TABLE.events} ADD COLUMN epoch bigint;`,
  },
  {
    version: 4,
    name: 'relay members: each relay on the database, its role, epoch, lag and when it was last seen',
    // One row per relay home (pg-members.ts), upserted by the leader's heartbeat and a standby's follow
    // loop: liveness for the console, not history (the log's relay.leader_changed is the history).
    sql: `
      CREATE TABLE ${TABLE.members} (
        id          text PRIMARY KEY,
        name        text NOT NULL,
        url         text,
        role        text NOT NULL CHECK (role IN ('leader', 'standby')),
        epoch       bigint,
        seq         bigint NOT NULL,
        lag_records bigint NOT NULL DEFAULT 0,
        lag_ms      bigint NOT NULL DEFAULT 0,
        seen_at     timestamptz NOT NULL
      );`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** The database's schema version (0: no relay has written it). */
export async function schemaVersion(client: PgClient): Promise<number> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [TABLE.schema]);
  if (!exists.rows[0]?.t) return 0;
  const r = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${TABLE.schema}`);
  return r.rows[0]?.v ?? 0;
}

export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `the event store's schema is version ${found}, newer than this relay knows (${known}): a newer relay wrote it; run that version, or export the log with it`,
    );
    this.name = 'SchemaTooNewError';
  }
}

/** Brings the schema up to date; returns the versions applied. The caller holds the writer's lock. */
export async function migrate(client: PgClient, upTo = SCHEMA_VERSION): Promise<number[]> {
  const found = await schemaVersion(client);
  if (found > SCHEMA_VERSION) throw new SchemaTooNewError(found, SCHEMA_VERSION);
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= found || m.version > upTo) continue;
    await client.query('BEGIN');
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${TABLE.schema} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      await client.query(m.sql);
      await client.query(`INSERT INTO ${TABLE.schema} (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    applied.push(m.version);
  }
  return applied;
}
