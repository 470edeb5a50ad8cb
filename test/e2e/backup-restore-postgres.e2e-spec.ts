import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairForBackup, reconnectThenRenew } from '../support/backup';
import { bearer, tempHome } from '../support/harness';
import { ensureBuilt, spawnSvc, startRelayProcess, type SvcProcess } from '../support/dist';
import { dbOf, usePostgres } from '../support/postgres';

/**
 * Issue 37.5 on RELAY_EVENT_STORE=postgres://...: the backup takes the database's rows up to its head (and
 * the data keys and snapshot beside them) from a running relay; `restore --to` puts them into another,
 * empty database. A real server, real relay processes, a real phone.
 */
jest.setTimeout(120_000);
beforeAll(() => ensureBuilt(), 300_000);
const pg = usePostgres();

const running = new Set<SvcProcess>();
const stop = async (p: SvcProcess): Promise<void> => {
  p.child.kill('SIGTERM');
  await p.exited;
  running.delete(p);
};
afterEach(async () => {
  for (const p of running) await stop(p);
});

async function start(home: string, url: string): Promise<SvcProcess & { url: string }> {
  const p = await startRelayProcess(home, { RELAY_EVENT_STORE: url, PHONE_ENABLED: '1', RELAY_LOG_LEVEL: 'WARNING' });
  running.add(p);
  return p;
}

async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  const p = spawnSvc(args, env);
  const { code } = await p.exited;
  return { code, out: p.stdout(), err: p.stderr() };
}

describe('backup and restore on PostgreSQL', () => {
  it('backs up a running relay on one database and restores into another; the phone and its sealed Thread come back', async () => {
    const urlA = await pg.createDatabase();
    const urlB = await pg.createDatabase();
    const homeA = tempHome();
    let a = await start(homeA, urlA);
    const phone = await pairForBackup(a.url, 'PG0001', 'dev-pg-backup');
    const posted = await fetch(`${a.url}/phone/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 'kept', text: 'sealed under a data key' }),
    });
    expect(posted.status).toBe(200);
    await stop(a); // a clean stop writes a snapshot row
    a = await start(homeA, urlA);

    const out = path.join(tempHome(), 'pg.backup');
    const backup = await cli(['relay', 'backup', '--out', out, '--json'], { SVC_HOME: homeA, RELAY_EVENT_STORE: urlA });
    expect({ code: backup.code, err: backup.err }).toEqual({ code: 0, err: '' });
    const report = JSON.parse(backup.out) as { store: string; head: { seq: number; hash: string }; snapshotSeq: number | null };
    expect(report.store).toBe('postgres');
    expect(report.snapshotSeq).not.toBeNull();
    const head = await pg.query(dbOf(urlA), 'SELECT record FROM svc_relay_events WHERE seq = $1', [report.head.seq]);
    expect(JSON.parse(String(head[0].record))).toMatchObject({ hash: report.head.hash });
    await stop(a);

    const homeB = path.join(tempHome(), 'restored');
    const restored = await cli(['relay', 'restore', out, '--home', homeB, '--to', urlB], {});
    expect({ code: restored.code, err: restored.err }).toEqual({ code: 0, err: '' });
    // The log, its snapshot and the data keys went into the database, not the home.
    expect(fs.existsSync(path.join(homeB, 'relay', 'events'))).toBe(false);
    expect(fs.existsSync(path.join(homeB, 'relay', 'personal-keys.json'))).toBe(false);
    const rows = await pg.query(dbOf(urlB), 'SELECT max(seq)::int AS hi FROM svc_relay_events');
    expect(rows[0].hi).toBe(report.head.seq);
    expect((await pg.query(dbOf(urlB), 'SELECT count(*)::int AS n FROM svc_relay_personal_keys'))[0].n).toBeGreaterThan(0);
    // Sealed again under the restored home's KEK (the archive carries the keys as the file store does).
    expect(await pg.query(dbOf(urlB), 'SELECT DISTINCT octet_length(key) AS n FROM svc_relay_personal_keys')).toEqual([{ n: 61 }]);
    expect(fs.existsSync(path.join(homeB, 'relay', 'standby.kek'))).toBe(true);
    const verified = await cli(['relay', 'events', 'verify', '--json'], { SVC_HOME: homeB, RELAY_EVENT_STORE: urlB });
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.out)).toMatchObject({ ok: true, lastSeq: report.head.seq, lastHash: report.head.hash });

    // The same archive restores into a file home too: one archive shape whichever store wrote it.
    const fileHome = path.join(tempHome(), 'file-home');
    expect((await cli(['relay', 'restore', out, '--home', fileHome], {})).code).toBe(0);
    const fileVerified = await cli(['relay', 'events', 'verify', '--json'], { SVC_HOME: fileHome });
    expect(JSON.parse(fileVerified.out)).toMatchObject({ ok: true, lastSeq: report.head.seq, lastHash: report.head.hash });
    expect(fs.existsSync(path.join(fileHome, 'relay', 'personal-keys.json'))).toBe(true);

    const b = await start(homeB, urlB);
    const renewed = await reconnectThenRenew(b.url, phone);
    const thread = await fetch(`${b.url}/phone/threads/kept`, { headers: bearer(renewed.session_token as string) });
    expect(thread.status).toBe(200);
    expect(((await thread.json()) as { entries: Array<{ text: string }> }).entries.map((e) => e.text)).toEqual(['sealed under a data key']);
  });
});
