/**
 * A real PostgreSQL server for one test file (scripts/temp-postgres.js: `initdb` on a temp directory,
 * `pg_ctl start` on a free loopback port, torn down with the directory). No mock.
 */
export type TestPostgres = {
  /** A URL for a database of this server (created by `createDatabase`). */
  url(db: string): string;
  createDatabase(name?: string): Promise<string>;
  query(db: string, sql: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  stop(): Promise<void>;
};

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain script the benchmarks share
const temp = require('../../scripts/temp-postgres.js') as { startPostgres(settings?: Record<string, string>): Promise<TestPostgres> };

export function startPostgres(settings?: Record<string, string>): Promise<TestPostgres> {
  return temp.startPostgres(settings);
}

/**
 * A server for the whole test file: started before its first test, stopped after its last. The handle
 * can be used from any test (it reaches the server started for the file).
 */
export function usePostgres(): TestPostgres {
  let server: TestPostgres | null = null;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.stop());
  const live = (): TestPostgres => {
    if (!server) throw new Error('the PostgreSQL server is not started yet (use the handle inside a test or hook)');
    return server;
  };
  return {
    url: (db) => live().url(db),
    createDatabase: (name) => live().createDatabase(name),
    query: (db, sql, values) => live().query(db, sql, values),
    stop: () => live().stop(),
  };
}

/** The database name of a URL from `createDatabase`. */
export const dbOf = (url: string): string => new URL(url).pathname.slice(1);
