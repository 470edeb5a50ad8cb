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
