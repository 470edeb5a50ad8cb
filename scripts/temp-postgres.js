'use strict';
// A throwaway PostgreSQL server: `initdb` on a temp directory, `pg_ctl start` on a free loopback port.
// Used by the tests (test/support/postgres.ts) and the benchmarks (bench/event-store.js); run by hand,
//   node scripts/temp-postgres.js
// starts one and prints its URL until Ctrl-C. Debian's `postgresql` package provides the binaries
// (apt-get install -y postgresql); PG_BIN points elsewhere. As root, the server runs as the `postgres`
// user (PostgreSQL refuses to run as root).
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

function postgresBinDir() {
  const candidates = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const lib = '/usr/lib/postgresql';
  if (fs.existsSync(lib)) for (const v of fs.readdirSync(lib).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(lib, v, 'bin'));
  for (const p of (process.env.PATH || '').split(path.delimiter)) candidates.push(p);
  for (const dir of candidates) if (fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) return dir;
  throw new Error("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql (apt-get install -y postgresql) or set PG_BIN");
}

function run(cmd, args, asUser) {
  const [file, argv] = asUser ? ['runuser', ['-u', asUser, '--', cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) =>
    execFile(file, argv, { timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${path.basename(cmd)} failed: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

let dbCounter = 0;

const INITDB_ARGS = ['-A', 'trust', '-U', 'svc', '-E', 'UTF8', '--no-locale', '--no-sync'];

/**
 * A freshly initialised data directory, made once per PostgreSQL build and user and then copied for each
 * server: `initdb` costs about 0.8 s of CPU on a loaded two-core machine and a copy of its 40 MB about
 * 0.07 s, and a test run starts some twenty servers. The template is made aside and renamed into place,
 * so a reader never sees half of one; it is never started itself. SVC_PG_TEMPLATE=0 runs initdb each time.
 */
async function initdbFromTemplate(bin, data, asUser) {
  if (process.env.SVC_PG_TEMPLATE === '0') return run(path.join(bin, 'initdb'), ['-D', data, ...INITDB_ARGS], asUser);
  const version = (await run(path.join(bin, 'postgres'), ['--version'], null)).trim();
  const key = require('node:crypto')
    .createHash('sha256')
    .update([bin, version, asUser ?? process.getuid?.(), ...INITDB_ARGS].join('\0'))
    .digest('hex')
    .slice(0, 16);
  const template = path.join(os.tmpdir(), `svc-pg-template-${key}`);
  // Whole or absent (renamed into place), unless something pruned TMPDIR under it: its control file is
  // the last thing a pruner leaves, so a template without one is made again.
  const whole = () => ['PG_VERSION', 'global/pg_control', 'base'].every((f) => fs.existsSync(path.join(template, f)));
  if (!whole()) {
    if (fs.existsSync(template)) {
      // Present but not whole: pruned. Moved aside first (a rename is atomic), so a template another process
      // renames into place meanwhile is never the one removed.
      const broken = `${template}.broken-${process.pid}`;
      try {
        fs.renameSync(template, broken);
      } catch {
        // another process moved it first
      }
      fs.rmSync(broken, { recursive: true, force: true });
    }
    const making = fs.mkdtempSync(`${template}.making-`);
    try {
      if (asUser) fs.chownSync(making, ...(await ownerOf(asUser)));
      await run(path.join(bin, 'initdb'), ['-D', path.join(making, 'data'), ...INITDB_ARGS], asUser);
      try {
        fs.renameSync(path.join(making, 'data'), template);
      } catch (err) {
        // Another process made it first: theirs is as good as ours.
        if (!whole()) throw err;
      }
    } finally {
      fs.rmSync(making, { recursive: true, force: true });
    }
  }
  // `cp -a` keeps the owner (the postgres user when root) and the 0700 mode PostgreSQL insists on.
  await run('cp', ['-a', template, data], null);
}

async function ownerOf(user) {
  return [Number((await run('id', ['-u', user], null)).trim()), Number((await run('id', ['-g', user], null)).trim())];
}

/**
 * Starts a server; resolves to { url(db), createDatabase(name?), query(db, sql, values?), stop() }.
 * `settings` are extra `-c name=value` server settings.
 */
async function startPostgres(settings = {}) {
  const { Client } = require('pg');
  const bin = postgresBinDir();
  const asUser = process.getuid && process.getuid() === 0 ? 'postgres' : null;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-'));
  if (asUser) fs.chownSync(root, ...(await ownerOf(asUser)));
  const data = path.join(root, 'data');
  const port = await freePort();
  await initdbFromTemplate(bin, data, asUser);
  const extra = Object.entries(settings)
    .map(([k, v]) => ` -c ${k}=${v}`)
    .join('');
  await run(
    path.join(bin, 'pg_ctl'),
    ['-D', data, '-l', path.join(root, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1${extra}`, 'start'],
    asUser,
  );
  const url = (db) => `postgres://svc@127.0.0.1:${port}/${db}`;
  const query = async (db, sql, values = []) => {
    const c = new Client({ connectionString: url(db) });
    await c.connect();
    try {
      return (await c.query(sql, values)).rows;
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

module.exports = { startPostgres, postgresBinDir };

if (require.main === module) {
  startPostgres()
    .then(async (pg) => {
      const url = await pg.createDatabase('svc');
      console.log(`PostgreSQL on ${url} (Ctrl-C stops it and removes its data)`);
      console.log(`  RELAY_EVENT_STORE=${url} npm start`);
      // The server runs on its own (pg_ctl starts it in the background): this process waits for the signal
      // that stops it, and removes its data.
      const alive = setInterval(() => undefined, 1 << 30);
      const stop = () => pg.stop().then(() => (clearInterval(alive), process.exit(0)));
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    })
    .catch((err) => {
      console.error(err.message);
      process.exit(1);
    });
}
