import type BetterSqlite3 from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoreFile } from './agent-home';

// The native module is loaded by the first read of a store, not at the relay's start.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sqlite = (): typeof BetterSqlite3 => require('better-sqlite3') as typeof BetterSqlite3;

/** How long a read waits on a lock the agent holds (a rollback-journal writer) before the store counts as busy. */
export const BUSY_TIMEOUT_MS = 100;
/** After a busy answer, the store is not tried again for this long: a phone polling every 750 ms must not stall the relay 100 ms each time. */
export const BUSY_BACKOFF_MS = 2_000;
/** Connections kept open (one per store file; the least recently used is closed beyond this). */
const MAX_OPEN = 32;

/** A table as the store declares it: only a plain table is read (a view or a virtual table could run anything). */
export type TableInfo = { plain: boolean; columns: ReadonlySet<string> };
export type StoreSchema = { sessions: TableInfo | null; messages: TableInfo | null };

export type StoreRead<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Why a store could not be read, in words a phone may see: never a host path. */
export class StoreUnusable extends Error {}

type Handle = {
  db: BetterSqlite3.Database;
  dev: number;
  ino: number;
  schemaVersion: number | null;
  schema: StoreSchema;
  statements: Map<string, BetterSqlite3.Statement>;
};

/**
 * Read-only connections to the agent's SQLite session stores, one per file, kept open between requests
 * and opened again when the file at the path is another one (its device or inode changed: the agent
 * replaced it). A store is a file the relay does not own, so every read is defensive: opened read-only
 * (`fileMustExist`, never created), `query_only` and `trusted_schema=OFF`, a short busy timeout, only
 * plain tables read, and every failure turned into a reason instead of an exception.
 *
 * The store must resolve (symlinks followed) to a regular file inside the agent home: a symlink out of it
 * is refused (the operator names a store elsewhere with RELAY_AGENT_STATE_DB instead). A read-only
 * connection to a WAL store may create the empty `-wal`/`-shm` companions, as every SQLite reader does;
 * the database file itself is never written.
 */
export class StateDbPool {
  private readonly handles = new Map<string, Handle>();
  private readonly busyUntil = new Map<string, number>();
  /** The real path each store path resolved to last: a store that is gone has its connection closed (its disk space freed). */
  private readonly realOf = new Map<string, string>();

  constructor(
    private readonly home: string,
    private readonly now: () => number,
    private readonly onError: (store: StoreFile, reason: string, err: unknown) => void = () => {},
  ) {}

  /** Runs `read` on the store's connection; never throws (a failure is `{ok: false, reason}`). */
  read<T>(
    store: StoreFile,
    read: (db: BetterSqlite3.Database, schema: StoreSchema, prepare: (sql: string) => BetterSqlite3.Statement) => T,
  ): StoreRead<T> {
    let real: string;
    try {
      real = this.locate(store.file);
    } catch (err) {
      const was = this.realOf.get(store.file);
      this.realOf.delete(store.file);
      if (was && ![...this.realOf.values()].includes(was)) this.drop(was);
      return { ok: false, reason: err instanceof StoreUnusable ? err.message : 'unreadable' };
    }
    this.realOf.set(store.file, real);
    const until = this.busyUntil.get(real);
    if (until !== undefined) {
      if (this.now() < until) return { ok: false, reason: 'busy (the agent holds a lock on it)' };
      this.busyUntil.delete(real);
    }
    let h: Handle | undefined;
    try {
      h = this.handle(real);
      refreshSchema(h);
      const handle = h;
      const prepare = (sql: string) => {
        let st = handle.statements.get(sql);
        if (!st) {
          st = handle.db.prepare(sql);
          handle.statements.set(sql, st);
        }
        return st;
      };
      return { ok: true, value: read(h.db, h.schema, prepare) };
    } catch (err) {
      const reason = reasonOf(err);
      if (reason.startsWith('busy')) this.busyUntil.set(real, this.now() + BUSY_BACKOFF_MS);
      else if (h && !(err instanceof StoreUnusable)) this.drop(real);
      if (!(err instanceof StoreUnusable)) this.onError(store, reason, err);
      return { ok: false, reason };
    }
  }

  close(): void {
    for (const real of [...this.handles.keys()]) this.drop(real);
  }

  /** The store's real path, when it is a regular file inside the agent home. */
  private locate(file: string): string {
    let real: string;
    try {
      fs.lstatSync(file);
      real = fs.realpathSync(file);
    } catch {
      throw new StoreUnusable('not found');
    }
    let home: string;
    try {
      home = fs.realpathSync(this.home);
    } catch {
      throw new StoreUnusable('not found');
    }
    const rel = path.relative(home, real);
    if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel))
      throw new StoreUnusable('a symlink out of the agent home (refused)');
    let st: fs.Stats;
    try {
      st = fs.statSync(real);
    } catch {
      throw new StoreUnusable('not found');
    }
    if (!st.isFile()) throw new StoreUnusable('not a regular file');
    return real;
  }

  private handle(real: string): Handle {
    const st = fs.statSync(real);
    let h = this.handles.get(real);
    if (h && (h.dev !== st.dev || h.ino !== st.ino)) {
      this.drop(real);
      h = undefined;
    }
    if (h) {
      // Most recently used last: the first one is closed when too many are open.
      this.handles.delete(real);
      this.handles.set(real, h);
      return h;
    }
    const Database = sqlite();
    const db = new Database(real, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    try {
      db.pragma('trusted_schema = OFF');
      db.pragma('query_only = ON');
      db.pragma('cell_size_check = ON');
    } catch (err) {
      db.close();
      throw err;
    }
    h = { db, dev: st.dev, ino: st.ino, schemaVersion: null, schema: { sessions: null, messages: null }, statements: new Map() };
    this.handles.set(real, h);
    while (this.handles.size > MAX_OPEN) this.drop(this.handles.keys().next().value!);
    return h;
  }

  private drop(real: string): void {
    const h = this.handles.get(real);
    this.handles.delete(real);
    try {
      h?.db.close();
    } catch {
      /* already unusable */
    }
  }
}

/** The two tables' kinds and columns, read again whenever the store's schema version moves (the agent migrated it). */
function refreshSchema(h: Handle): void {
  const version = h.db.pragma('schema_version', { simple: true }) as number;
  if (version === h.schemaVersion) return;
  h.statements.clear();
  const table = (name: string): TableInfo | null => {
    const row = h.db.prepare("SELECT type, sql FROM sqlite_master WHERE name = ? AND type IN ('table', 'view') LIMIT 1").get(name) as
      { type: string; sql: unknown } | undefined;
    if (!row) return null;
    const plain = row.type === 'table' && !(typeof row.sql === 'string' && /^\s*create\s+virtual\b/i.test(row.sql));
    const columns = new Set<string>();
    if (plain)
      for (const c of h.db.prepare(`PRAGMA table_info("${name}")`).all() as Array<{ name: unknown }>)
        if (typeof c.name === 'string') columns.add(c.name);
    return { plain, columns };
  };
  h.schema = { sessions: table('sessions'), messages: table('messages') };
  h.schemaVersion = version;
}

function reasonOf(err: unknown): string {
  if (err instanceof StoreUnusable) return err.message;
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : '';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy (the agent holds a lock on it)';
  if (code === 'SQLITE_NOTADB') return 'not an SQLite database';
  if (code.startsWith('SQLITE_CORRUPT')) return 'corrupt';
  if (code.startsWith('SQLITE_CANTOPEN')) return 'cannot be opened';
  if (code.startsWith('SQLITE_')) return `unreadable (${code})`;
  return 'unreadable';
}
