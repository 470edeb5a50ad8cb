import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

/**
 * A real PostgreSQL server for one test file: `initdb` on a temp directory, `pg_ctl start` on a free
 * loopback port, torn down with the directory. Debian's `postgresql` package provides the binaries
 * (.ci/run installs it); PG_BIN points elsewhere. As root, the server runs as the `postgres` user
 * (PostgreSQL refuses to run as root).
 */
export type TestPostgres = {
  /** A URL for a database of this server (created by `createDatabase`). */
  url(db: string): string;
  createDatabase(name?: string): Promise<string>;
  query(db: string, sql: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  stop(): Promise<void>;
};

export function postgresBinDir(): string {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const lib = '/usr/lib/postgresql';
  if (fs.existsSync(lib)) {
    for (const v of fs.readdirSync(lib).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(lib, v, 'bin'));
  }
  for (const p of (process.env.PATH ?? '').split(path.delimiter)) candidates.push(p);
  for (const dir of candidates) if (fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) return dir;
  throw new Error("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql (apt-get install -y postgresql) or set PG_BIN");
}

function run(cmd: string, args: string[], asUser: string | null): Promise<string> {
  const [file, argv] = asUser ? ['runuser', ['-u', asUser, '--', cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) =>
    execFile(file, argv, { timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} failed: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

let dbCounter = 0;

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const asUser = process.getuid?.() === 0 ? 'postgres' : null;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-'));
  if (asUser) {
    const uid = Number((await run('id', ['-u', asUser], null)).trim());
    const gid = Number((await run('id', ['-g', asUser], null)).trim());
    fs.chownSync(root, uid, gid);
  }
  const data = path.join(root, 'data');
  const port = await freePort();
  await run(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'svc', '-E', 'UTF8', '--no-locale', '--no-sync'], asUser);
  await run(
    path.join(bin, 'pg_ctl'),
    ['-D', data, '-l', path.join(root, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1`, 'start'],
    asUser,
  );
  const url = (db: string) => `postgres://svc@127.0.0.1:${port}/${db}`;
  const query = async (db: string, sql: string, values: unknown[] = []) => {
    const c = new Client({ connectionString: url(db) });
    await c.connect();
    try {
      return (await c.query(sql, values)).rows as Array<Record<string, unknown>>;
    } finally {
      await c.end();
    }
  };
  return {
    url,
    query,
    async createDatabase(name = `t${process.pid}_${++dbCounter}`) {
      await query('postgres', `CREATE DATABASE ${name}`);
      return url(name);
    },
    async stop() {
      await run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], asUser).catch(() => undefined);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
