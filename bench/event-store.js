'use strict';
// Issue 16: the event log on PostgreSQL against the file log, in the same run.
//  1. Durable events per second through the relay's command loop (decide, append with group commit,
//     durable, apply, publish) under 1, 16 and 256 concurrent pair/revoke clients: the file store
//     (fdatasync) and the PostgreSQL store (one INSERT a batch, committed with the server's WAL flush)
//     alternate round by round on the same disk; the ratio is PostgreSQL's to the file's.
//  2. Replay: the same log (written by the file rounds' workload) read, proven and applied to every
//     read model from PostgreSQL and from the file store; and the copy file -> PostgreSQL (import).
//   node bench/event-store.js [--seconds 2] [--clients 1,16,256] [--rounds 3] [--replay-events 100000]
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { dist, median, tempDir, fmt, report } = require('./_lib');
const { startPostgres } = require('../scripts/temp-postgres');
const { openLoop, pairRevokeCycle } = require('./_workload');

const { fileStore } = dist('apps/relay/src/common/loop/file-store.js');
const { postgresStore } = dist('apps/relay/src/common/loop/postgres-store.js');
const { Secrets } = dist('apps/relay/src/common/auth/secrets.js');
const { ReadModels } = dist('libs/domain/src/index.js');
const events = dist('libs/events/src/index.js');

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    clients: { type: 'string', default: '1,16,256' },
    rounds: { type: 'string', default: '3' },
    'replay-events': { type: 'string', default: '100000' },
  },
});
const SECONDS = Number(values.seconds);
const LEVELS = values.clients.split(',').map(Number);
const ROUNDS = Number(values.rounds);
const REPLAY_EVENTS = Number(values['replay-events']);

/** Pair/revoke cycles from `clients` concurrent callers while `until(log)` holds. */
async function drive(log, secrets, clients, until) {
  const client = async () => {
    while (until(log)) await pairRevokeCycle(log, secrets);
  };
  await Promise.all(Array.from({ length: clients }, client));
  await log.drain();
}

async function round(kind, clients, pg) {
  const dir = tempDir('svc-bench-store-');
  const secrets = Secrets.load(dir);
  const store = kind === 'file' ? fileStore(dir, 64 << 20) : postgresStore(await pg.createDatabase());
  const log = await openLoop(store, secrets, 1e9);
  const first = log.lastSeq;
  const start = process.hrtime.bigint();
  const stopAt = Date.now() + SECONDS * 1000;
  await drive(log, secrets, clients, () => Date.now() < stopAt);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const n = log.lastSeq - first;
  await log.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return n / seconds;
}

/** A file log of about `n` events from the relay's own workload (256 clients), for the replay rounds. */
async function writeReplayLog(n) {
  const dir = tempDir('svc-bench-replay-');
  const secrets = Secrets.load(dir);
  const log = await openLoop(fileStore(dir, 64 << 20), secrets, 1e9);
  await drive(log, secrets, 256, (l) => l.lastSeq < n);
  await log.close();
  return path.join(dir, 'events');
}

async function timeReplay(source) {
  const models = new ReadModels();
  const t0 = process.hrtime.bigint();
  const r = await source.walk({ onEvent: (e) => models.apply(e) });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  await source.close();
  return { eps: r.records / s, records: r.records };
}

/** What PostgreSQL and the disk allow without the relay: rows (lines) per second at N rows a commit, 2 s each. */
async function commitFloors(pg) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: await pg.createDatabase() });
  await client.connect();
  await client.query('CREATE TABLE floor (seq bigint PRIMARY KEY, record text NOT NULL)');
  const dir = tempDir('svc-bench-floor-');
  const fd = fs.openSync(path.join(dir, 'segment'), 'a');
  const line = 'x'.repeat(420);
  const out = [];
  let seq = 0;
  try {
    for (const rows of [1, 16, 256]) {
      let t0 = Date.now();
      let n = 0;
      while (Date.now() - t0 < 2000) {
        const seqs = Array.from({ length: rows }, () => ++seq);
        await client.query({
          name: `floor${rows}`,
          text: 'INSERT INTO floor SELECT * FROM unnest($1::bigint[], $2::text[])',
          values: [seqs, seqs.map(() => line)],
        });
        n += rows;
      }
      const pgRate = n / ((Date.now() - t0) / 1000);
      const buf = Buffer.from(`${line}\n`.repeat(rows));
      t0 = Date.now();
      n = 0;
      while (Date.now() - t0 < 2000) {
        fs.writeSync(fd, buf);
        fs.fdatasyncSync(fd);
        n += rows;
      }
      out.push({ rows, pg: pgRate, file: n / ((Date.now() - t0) / 1000) });
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
    await client.end();
  }
  return out;
}

(async () => {
  const pg = await startPostgres();
  try {
    const rows = [['clients', 'PostgreSQL events/s (median)', 'file events/s (median)', 'ratio PG / file', 'rounds']];
    const results = [];
    for (const clients of LEVELS) {
      const file = [];
      const pgs = [];
      for (let r = 0; r < ROUNDS; r++) {
        file.push(await round('file', clients, pg));
        pgs.push(await round('postgres', clients, pg));
      }
      const f = median(file);
      const p = median(pgs);
      results.push({ clients, pg: p, file: f, ratio: p / f, roundsPg: pgs, roundsFile: file });
      rows.push([
        String(clients),
        fmt(p),
        fmt(f),
        (p / f).toFixed(2),
        `${pgs.map((x) => fmt(x)).join(' / ')} | ${file.map((x) => fmt(x)).join(' / ')}`,
      ]);
    }
    report('Durable events/s through the command loop (pair/revoke), PostgreSQL vs file store', rows);

    // The floors: the same server and disk with nothing of the relay, commits of 1, 16 and 256 rows (about
    // what a batch holds at 1, 16 and 256 clients) against one write + fdatasync of as many lines.
    const floors = await commitFloors(pg);
    report('The floors: bare commits of N rows (one pg connection, unnest INSERT) against write + fdatasync of N lines', [
      ['rows a commit', 'bare PostgreSQL rows/s', 'bare file lines/s', 'ratio PG / file'],
      ...floors.map((f) => [String(f.rows), fmt(f.pg), fmt(f.file), (f.pg / f.file).toFixed(2)]),
    ]);

    const dir = await writeReplayLog(REPLAY_EVENTS);
    const url = await pg.createDatabase();
    const t0 = process.hrtime.bigint();
    const copied = await events.copyLog(new events.FileLogSource(dir), { kind: 'postgres', url });
    const importSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const replay = { pg: [], file: [] };
    for (let r = 0; r < ROUNDS; r++) {
      replay.pg.push((await timeReplay(new events.PgLogSource(url))).eps);
      replay.file.push((await timeReplay(new events.FileLogSource(dir))).eps);
    }
    const rp = median(replay.pg);
    const rf = median(replay.file);
    report(`Replay of ${copied.records} events into every read model (chain proven), PostgreSQL vs file store`, [
      ['source', 'events/s (median)', 'ratio PG / file', 'rounds'],
      ['PostgreSQL', fmt(rp), (rp / rf).toFixed(2), replay.pg.map((x) => fmt(x)).join(' / ')],
      ['file', fmt(rf), '1.00', replay.file.map((x) => fmt(x)).join(' / ')],
    ]);
    console.log(
      `import file -> PostgreSQL (proven on the way and on arrival): ${copied.records} records in ${importSeconds.toFixed(2)} s (${fmt(copied.records / importSeconds)} records/s)`,
    );
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    console.log(
      JSON.stringify({ bench: 'event-store', results, floors, replay: { records: copied.records, pg: rp, file: rf, ratio: rp / rf }, importSeconds }),
    );
  } finally {
    await pg.stop();
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
