import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { burstThenKill, expectAcknowledgedSurvived } from '../support/crash-burst';
import { bearer, Phone, readEvents, tempHome } from '../support/harness';
import { ensureBuilt, ROOT, spawnSvc, startRelayProcess } from '../support/dist';
import { Client } from 'pg';
import { dbOf, usePostgres } from '../support/postgres';
import { SCHEMA_VERSION } from '../../libs/events/src/postgres/pg-schema';

/**
 * The relay on RELAY_EVENT_STORE=postgres://... as operators run it (real processes, a real server):
 * state survives a restart, a second relay is refused before it writes, and the audit commands
 * (verify, replay, tail, export, import) work on the database as on the file log.
 */
jest.setTimeout(90_000);

beforeAll(() => ensureBuilt(), 120_000);
const pg = usePostgres();

const PASSWORD_URL = (url: string) => url.replace('postgres://svc@', 'postgres://svc:hunter2-secret@');

async function svc(args: string[], env: NodeJS.ProcessEnv) {
  const p = spawnSvc(args, env);
  const { code } = await p.exited;
  return { code, out: p.stdout(), err: p.stderr() };
}

async function pairPhone(url: string, code: string) {
  const reg = await fetch(`${url}/pairing/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  expect(reg.status).toBe(200);
  const phone = await Phone.connect(url);
  const ok = await phone.auth({ pairing_code: code, device_name: 'pixel', device_id: 'd-pg' });
  expect(ok.type).toBe('auth.ok');
  return { phone, token: ok.payload.session_token as string };
}

describe('svc relay start on PostgreSQL', () => {
  it('writes its log to the database, keeps sessions across a restart, and never prints the URL password or a token', async () => {
    const url = PASSWORD_URL(await pg.createDatabase());
    const home = tempHome();
    const env = { RELAY_EVENT_STORE: url };
    const first = await startRelayProcess(home, env);
    expect(first.stderr()).toMatch(/event log postgres:\/\/svc:\*\*\*@127\.0\.0\.1:\d+\/\w+ \(last seq 1\)/);
    const { phone, token } = await pairPhone(first.url, 'PGA123');
    phone.close();
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    // Nothing went to the file log.
    expect(fs.existsSync(path.join(home, 'relay', 'events'))).toBe(false);
    const db = dbOf(url);
    const types = (await pg.query(db, 'SELECT type FROM svc_relay_events ORDER BY seq')).map((r) => r.type);
    expect(types[0]).toBe('relay.started');
    expect(types).toContain('session.created');
    expect(types.at(-1)).toBe('relay.stopping');
    // The last snapshot went into its table on the way out.
    expect((await pg.query(db, 'SELECT count(*)::int AS n FROM svc_relay_snapshots'))[0].n).toBe(1);

    const second = await startRelayProcess(home, env);
    const sessions = await fetch(`${second.url}/sessions`, { headers: bearer(token) });
    expect(sessions.status).toBe(200);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    for (const out of [first.stdout() + first.stderr(), second.stdout() + second.stderr()]) {
      expect(out).not.toContain('hunter2-secret');
      expect(out).not.toContain(token);
      expect(out).not.toContain('PGA123');
    }
    const records = (await pg.query(db, 'SELECT record FROM svc_relay_events')).map((r) => r.record as string).join('\n');
    expect(records).not.toContain(token);
    expect(records).not.toContain('PGA123');
  });

  it('a second relay on the same database exits 1 before it writes a record; the first goes on', async () => {
    const url = await pg.createDatabase();
    const db = dbOf(url);
    const first = await startRelayProcess(tempHome(), { RELAY_EVENT_STORE: url });
    const before = (await pg.query(db, 'SELECT count(*)::int AS n FROM svc_relay_events'))[0].n;
    const second = spawnSvc(['relay', 'start'], { SVC_HOME: tempHome(), RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_EVENT_STORE: url });
    expect((await second.exited).code).toBe(1);
    expect(second.stderr()).toMatch(
      /the event log in postgres:\/\/svc@127\.0\.0\.1:\d+\/\w+ \(svc_relay_events\) is in use by svc-relay writer pid \d+/,
    );
    expect(second.stderr()).toContain('two relays on one log would fork its chain');
    expect(second.stderr()).not.toContain('    at ');
    expect((await pg.query(db, 'SELECT count(*)::int AS n FROM svc_relay_events'))[0].n).toBe(before);
    const { phone } = await pairPhone(first.url, 'PGB123');
    phone.close();
    // The doctor sees the database, the chain and who writes it.
    const doc = await svc(['relay', 'doctor', '--json'], {
      SVC_HOME: tempHome(),
      RELAY_EVENT_STORE: url,
      RELAY_PORT: '1',
      RELAY_WEBAPI_URL: 'http://127.0.0.1:1',
    });
    const checks = (JSON.parse(doc.out) as { checks: Array<{ id: string; status: string; summary: string }> }).checks;
    expect(checks.find((c) => c.id === 'log-store')).toMatchObject({ status: 'ok', summary: expect.stringContaining(`schema ${SCHEMA_VERSION}`) });
    expect(checks.find((c) => c.id === 'log-chain')).toMatchObject({
      status: 'ok',
      summary: expect.stringMatching(/event log verified: \d+ records in table svc_relay_events/),
    });
    expect(checks.find((c) => c.id === 'lock')?.summary).toMatch(/^held by svc-relay writer pid \d+/);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
  });

  describe('one writer per home, whatever store holds the log', () => {
    const upload = async (url: string, token: string, bytes: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([bytes], { type: 'image/png' }), 'photo.png');
      const res = await fetch(`${url}/media/upload`, { method: 'POST', headers: bearer(token), body: form });
      expect(res.status).toBe(200);
      return ((await res.json()) as { token: string }).token;
    };
    const fetchMedia = (url: string, token: string, media: string) => fetch(`${url}/media/${media}`, { headers: bearer(token) });

    it('relay A on PostgreSQL, B on the file log with the same SVC_HOME: B exits 1 naming A, A keeps its uploads', async () => {
      const home = tempHome();
      const a = await startRelayProcess(home, { RELAY_EVENT_STORE: await pg.createDatabase() });
      const { phone, token } = await pairPhone(a.url, 'HOM123');
      const bytes = Buffer.from('\x89PNG owned upload of relay A');
      const media = await upload(a.url, token, bytes);
      const owned = fs.readdirSync(path.join(home, 'relay', 'media-owned'));
      expect(owned.length).toBeGreaterThan(0);

      const b = spawnSvc(['relay', 'start'], { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0' });
      expect((await b.exited).code).toBe(1);
      expect(b.stderr()).toContain(`the relay home ${path.join(home, 'relay')} is in use by another relay (pid ${a.child.pid}, since `);
      expect(b.stderr()).toContain("two relays on one home would delete each other's uploads");
      expect(b.stderr()).not.toContain('    at ');
      // B touched nothing: no file log began, A's owned files are all there and its token still serves them.
      expect(fs.existsSync(path.join(home, 'relay', 'events'))).toBe(false);
      expect(fs.readdirSync(path.join(home, 'relay', 'media-owned')).sort()).toEqual(owned.sort());
      const got = await fetchMedia(a.url, token, media);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      phone.close();
      a.child.kill('SIGTERM');
      expect((await a.exited).code).toBe(0);
      expect(fs.existsSync(path.join(home, 'relay', 'LOCK'))).toBe(false);
    });

    it('relay A on the file log, B on PostgreSQL with the same SVC_HOME: B exits 1 before it opens the database', async () => {
      const home = tempHome();
      const a = await startRelayProcess(home);
      const url = await pg.createDatabase();
      const b = spawnSvc(['relay', 'start'], { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_EVENT_STORE: url });
      expect((await b.exited).code).toBe(1);
      expect(b.stderr()).toContain(`the relay home ${path.join(home, 'relay')} is in use by another relay (pid ${a.child.pid}, since `);
      // The database was never written: not even the schema exists.
      const tables = await pg.query(dbOf(url), "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name LIKE 'svc_relay_%'");
      expect(tables[0].n).toBe(0);
      const health = await fetch(`${a.url}/health`);
      expect(health.status).toBe(200);
      a.child.kill('SIGTERM');
      expect((await a.exited).code).toBe(0);
    });
  });

  it('an unreachable database or a bad RELAY_EVENT_STORE is a clear start-up error (exit 1)', async () => {
    const bad = await svc(['relay', 'start'], { SVC_HOME: tempHome(), RELAY_PORT: '0', RELAY_EVENT_STORE: 'mysql://x' });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('RELAY_EVENT_STORE must be a postgres:// (or postgresql://) URL');
    const down = await svc(['relay', 'start'], {
      SVC_HOME: tempHome(),
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: '0',
      RELAY_EVENT_STORE: 'postgres://svc:pw-secret@127.0.0.1:1/none',
    });
    expect(down.code).toBe(1);
    expect(down.err).toContain('cannot reach the event store postgres://svc:***@127.0.0.1:1/none');
    expect(down.err).not.toContain('pw-secret');
  });

  it('SIGKILL during a burst of pairings: every acknowledged code, session and revocation is in the database after the restart', async () => {
    const url = await pg.createDatabase();
    const home = tempHome();
    const first = await startRelayProcess(home, { RELAY_EVENT_STORE: url, RELAY_LOG_LEVEL: 'WARNING' });
    // Thirty acknowledged sessions before the kill (the file-log drill, crash.e2e, runs forty): past the 24 the
    // twelve workers pair before any of them reaches its first unused code (every fourth), so the drill holds
    // codes, sessions and revocations.
    const ack = await burstThenKill(first, 12, 30);
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(ack.paired.size).toBeGreaterThanOrEqual(30);
    expect(ack.unusedCodes.size).toBeGreaterThan(0);
    expect(ack.revoked.size).toBeGreaterThan(0);
    expect(ack.inFlightAtKill).toBeGreaterThan(0);
    // A batch is one transaction: the kill leaves whole batches, and the chain proves.
    expect((await svc(['relay', 'events', 'verify', '--json'], { RELAY_EVENT_STORE: url })).code).toBe(0);
    const second = await startRelayProcess(home, { RELAY_EVENT_STORE: url, RELAY_LOG_LEVEL: 'WARNING' });
    try {
      await expectAcknowledgedSurvived(second.url, ack);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('the database session lost under a running relay: it steps down (nothing unrecorded is served), then leads again with a new epoch', async () => {
    const url = await pg.createDatabase();
    const db = dbOf(url);
    const relay = await startRelayProcess(tempHome(), { RELAY_EVENT_STORE: url, RELAY_STANDBY_POLL_MS: '100' });
    try {
      await pg.query(db, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'svc-relay writer%'`, [
        db,
      ]);
      // Issue 38: it no longer exits; it steps down to standby, and with no other relay it takes the lock back.
      for (let i = 0; i < 600 && !(await pg.query(db, `SELECT 1 FROM svc_relay_events WHERE type = 'relay.leader_changed'`)).length; i++)
        await new Promise((r) => setTimeout(r, 50));
      const changed = await pg.query(db, `SELECT (record::jsonb)->'data' AS data FROM svc_relay_events WHERE type = 'relay.leader_changed'`);
      expect(changed.map((r) => r.data)).toEqual([expect.objectContaining({ epoch: 2, previousEpoch: 1 })]);
      expect(relay.stdout()).toContain('event store connection lost');
      expect(relay.stdout()).toContain('stepping down to standby');
      expect(relay.child.exitCode).toBeNull();
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
  });
});

describe('svc relay events on both stores', () => {
  it('export file -> PostgreSQL -> file, import, verify, replay and tail agree, and the chain is the same', async () => {
    // A real relay's file log with a paired session.
    const home = tempHome();
    const relay = await startRelayProcess(home);
    const { phone, token } = await pairPhone(relay.url, 'CPY123');
    phone.close();
    relay.child.kill('SIGTERM');
    await relay.exited;
    const fileEvents = readEvents(home);
    const env = { SVC_HOME: home };

    const url = await pg.createDatabase();
    const exp = await svc(['relay', 'events', 'export', '--to', url, '--json'], env);
    expect(exp.code).toBe(0);
    const exported = JSON.parse(exp.out) as { records: number; lastSeq: number; lastHash: string };
    expect(exported.records).toBe(fileEvents.length);

    const verifyFile = JSON.parse((await svc(['relay', 'events', 'verify', '--json'], env)).out);
    const verifyPg = await svc(['relay', 'events', 'verify', '--json'], { ...env, RELAY_EVENT_STORE: url });
    expect(verifyPg.code).toBe(0);
    expect(JSON.parse(verifyPg.out)).toMatchObject({ ok: true, store: 'postgres', lastSeq: verifyFile.lastSeq, lastHash: verifyFile.lastHash });

    const replayFile = JSON.parse((await svc(['relay', 'events', 'replay', '--json'], env)).out);
    const replayPg = JSON.parse((await svc(['relay', 'events', 'replay', '--json', '--log', url], env)).out);
    expect(replayPg.store).toBe('postgres');
    for (const k of ['events', 'lastSeq', 'lastHash', 'countsByType', 'sessions']) expect(replayPg[k]).toEqual(replayFile[k]);
    expect(replayPg.sessions).toHaveLength(1);

    const tailFile = await svc(['relay', 'events', 'tail', '--json', '-n', '3', '--type', 'session,relay.stopping'], env);
    const tailPg = await svc(['relay', 'events', 'tail', '--json', '-n', '3', '--type', 'session,relay.stopping', '--log', url], env);
    expect(tailPg.code).toBe(0);
    expect(tailPg.out).toBe(tailFile.out);
    expect(
      tailPg.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
    ).toEqual(['session.created', 'relay.stopping']);

    // Back from the database into a fresh home's file store: the same chain, and the token still works there.
    const home2 = tempHome();
    fs.mkdirSync(path.join(home2, 'relay'), { recursive: true });
    fs.copyFileSync(path.join(home, 'relay', 'secret.key'), path.join(home2, 'relay', 'secret.key'));
    const imp = await svc(['relay', 'events', 'import', url, '--json'], { SVC_HOME: home2 });
    expect(imp.code).toBe(0);
    expect(JSON.parse(imp.out)).toMatchObject({ lastSeq: exported.lastSeq, lastHash: exported.lastHash });
    expect(readEvents(home2)).toEqual(fileEvents);
    const again = await startRelayProcess(home2);
    expect((await fetch(`${again.url}/sessions`, { headers: bearer(token) })).status).toBe(200);
    again.child.kill('SIGTERM');
    await again.exited;

    // An export file too: byte for byte the log's records.
    const file = path.join(tempHome(), 'log.jsonl');
    expect((await svc(['relay', 'events', 'export', '--log', url, '--to', file], env)).code).toBe(0);
    const segs = fs
      .readdirSync(path.join(home, 'relay', 'events'))
      .filter((f) => f.endsWith('.jsonl'))
      .sort();
    expect(fs.readFileSync(file, 'utf8')).toBe(segs.map((f) => fs.readFileSync(path.join(home, 'relay', 'events', f), 'utf8')).join(''));
    expect((await svc(['relay', 'events', 'verify', '--log', file], env)).code).toBe(0);

    // Refusals: a full target, a store in use, the same log twice.
    const full = await svc(['relay', 'events', 'export', '--to', url], env);
    expect(full.code).toBe(1);
    expect(full.err).toMatch(/already holds a log \(\d+ records\): a copy goes only into an empty store/);
    const busy = await startRelayProcess(tempHome(), { RELAY_EVENT_STORE: url });
    const inUse = await svc(['relay', 'events', 'import', file, '--into', url], env);
    expect(inUse.code).toBe(1);
    expect(inUse.err).toContain('a relay is writing the target: stop it first');
    busy.child.kill('SIGTERM');
    await busy.exited;
  });

  it('verify on PostgreSQL names the first bad record and exits 1; tail --follow wakes on each commit', async () => {
    const url = await pg.createDatabase();
    const db = dbOf(url);
    const relay = await startRelayProcess(tempHome(), { RELAY_EVENT_STORE: url });
    const follow = spawnSvc(['relay', 'events', 'tail', '-f', '--json', '-n', '0', '--type', 'pairing'], { RELAY_EVENT_STORE: url });
    // Register only once the tail follows (its LISTEN or its first poll sent, so "-n 0" has fixed where it
    // starts): its reader connection names its pid (pg-connection.ts), and pg_stat_activity shows its last query.
    const following = async () =>
      (
        await pg.query(
          db,
          `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE $2 AND (query LIKE 'LISTEN %' OR query LIKE 'SELECT seq, type, record %')`,
          [db, `svc-relay reader pid ${follow.child.pid} %`],
        )
      ).length > 0;
    for (let i = 0; i < 600 && !(await following()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await following()).toBe(true);
    const reg = await fetch(`${relay.url}/pairing/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'FLW123' }),
    });
    expect(reg.status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (!follow.stdout().includes('pairing.') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(JSON.parse(follow.stdout().trim().split('\n')[0])).toMatchObject({ type: expect.stringMatching(/^pairing\./) });
    follow.child.kill('SIGINT');
    await follow.exited;
    relay.child.kill('SIGTERM');
    await relay.exited;

    await pg.query(db, `UPDATE svc_relay_events SET record = replace(record, '"port":', '"port":1') WHERE seq = 1`);
    const v = await svc(['relay', 'events', 'verify'], { RELAY_EVENT_STORE: url });
    expect(v.code).toBe(1);
    expect(v.err).toContain('first bad record: seq 1 in svc_relay_events: checksum mismatch');
    const start = await svc(['relay', 'start'], { SVC_HOME: tempHome(), RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', RELAY_EVENT_STORE: url });
    expect(start.code).toBe(1);
    expect(start.err).toContain('the event log is broken at seq 1 (svc_relay_events): checksum mismatch');
    expect(start.err).toContain('svc relay events verify"');
  });
});

describe('scripts/temp-postgres.js (a throwaway server for trying RELAY_EVENT_STORE)', () => {
  it('prints its URL, serves until SIGTERM, then stops the server and exits 0', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'temp-postgres.js')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + 30_000;
    while (!/postgres:\/\/\S+/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // The script prints its URL once the database is made and sets its signal handlers in the same turn.
    const url = /(postgres:\/\/\S+)/.exec(out)![1];
    const c = new Client({ connectionString: url });
    await c.connect();
    expect((await c.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await c.end();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const again = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    await expect(again.connect()).rejects.toThrow();
  });
});
