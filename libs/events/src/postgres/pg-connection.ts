import type { Client } from 'pg';
import * as os from 'node:os';

export type PgClient = Client;

/** The tables a relay keeps in its database (in the connection's schema: set it with `?options=-c search_path=NAME`). */
export const TABLE = {
  events: 'svc_relay_events',
  snapshots: 'svc_relay_snapshots',
  schema: 'svc_relay_schema',
  leader: 'svc_relay_leader',
  members: 'svc_relay_members',
} as const;

/** `postgres://` or `postgresql://`: what RELAY_EVENT_STORE and the CLI's `--log`/`--to` take as a database. */
export function isPostgresUrl(value: string | undefined): value is string {
  return typeof value === 'string' && /^postgres(ql)?:\/\//i.test(value.trim());
}

/** The URL fit for a log line or an error: the password (and any `password=` parameter) replaced by `***`. */
export function redactPgUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) if (/pass/i.test(key)) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/** Thrown when the database cannot be reached or refuses the login; the message never holds the password. */
export class PgConnectError extends Error {
  constructor(
    readonly location: string,
    reason: string,
  ) {
    super(`cannot reach the event store ${location}: ${reason}`);
    this.name = 'PgConnectError';
  }
}

/**
 * One connection (node-postgres, loaded on first use so a relay on the file log never pays for it). The
 * application name says which relay holds it, which is what a refused second relay is told.
 */
export async function connectPg(url: string, role: 'writer' | 'snapshots' | 'reader' | 'standby'): Promise<PgClient> {
  const { Client: PgClientClass } = await import('pg');
  const client = new PgClientClass({
    connectionString: url,
    application_name: `svc-relay ${role} pid ${process.pid} on ${os.hostname()}`.slice(0, 63),
    connectionTimeoutMillis: 10_000,
    // A database host that vanished (no FIN) is noticed by the socket, not only by the next query.
    keepAlive: true,
    keepAliveInitialDelayMillis: 2_000,
  });
  // An error event with no listener would crash the process; the owner installs its own after connecting.
  const early = (): void => undefined;
  client.on('error', early);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new PgConnectError(redactPgUrl(url), pgReason(err));
  }
  client.off('error', early);
  return client;
}

/** A database error in one line, with its SQLSTATE when it has one. */
export function pgReason(err: unknown): string {
  const e = err as { message?: string; code?: string };
  const msg = e?.message || String(err);
  return e?.code && /^[0-9A-Z]{5}$/.test(e.code) ? `${msg} (SQLSTATE ${e.code})` : msg;
}

/** SQLSTATE 42P01: the table does not exist (a database no relay has written yet). */
export function isUndefinedTable(err: unknown): boolean {
  return (err as { code?: string })?.code === '42P01';
}

/**
 * A connection made on first use and made again after it is lost (the query in hand fails; the next one
 * reconnects). For the readers and the snapshot store, which hold no lock: the writer never reconnects.
 */
export class LazyPgConnection {
  private client: Promise<PgClient> | null = null;

  constructor(
    private readonly url: string,
    private readonly role: 'snapshots' | 'reader',
  ) {}

  get(): Promise<PgClient> {
    if (!this.client) {
      const pending = connectPg(this.url, this.role).then((c) => {
        c.on('error', () => this.forget(pending));
        return c;
      });
      pending.catch(() => this.forget(pending));
      this.client = pending;
    }
    return this.client;
  }

  async close(): Promise<void> {
    const pending = this.client;
    this.client = null;
    if (pending) await (await pending.catch(() => null))?.end().catch(() => undefined);
  }

  private forget(pending: Promise<PgClient>): void {
    if (this.client === pending) this.client = null;
  }
}
