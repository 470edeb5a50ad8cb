import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog, SnapshotCipher, verifyLog } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Secrets } from '../../apps/relay/src/common/auth/secrets';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';
import { A_SECRETS, homeKeyFor, personalTraffic } from '../support/personal-keys';
import { svc } from '../support/cli';

/** Every file under a directory, as one string (what an attacker with a copy of the home could read). */
function everythingUnder(dir: string): string {
  let all = '';
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) all += fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1') + '\n';
  }
  return all;
}

describe('personal content: sealed at rest, forgettable', () => {
  let relay: TestRelay;
  afterEach(() => relay?.close());

  it('no plain text under the home; forgetting a device empties its content everywhere, keeps the rest, the chain and replay', async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const { a, aPrefix, b, bPrefix } = await personalTraffic(relay);
    // Live: the relay and the host read the content as sent.
    const recent = (await call(relay, 'GET', '/notifications/recent')).body.notifications as Json[];
    expect(recent.map((n) => n.text)).toEqual(expect.arrayContaining(['OTP 482913', 'charlie stays']));
    // At rest: the log, the keys, everything under the home holds none of it.
    await relay.loop.drain();
    const home = everythingUnder(relay.home);
    for (const s of [...A_SECRETS, 'charlie stays']) expect(home).not.toContain(s);
    // The console shows that content is sealed, never the content.
    const page = JSON.stringify((await call(relay, 'GET', '/console/api/events?limit=200')).body);
    for (const s of [...A_SECRETS, 'charlie stays']) expect(page).not.toContain(s);
    expect(page).toContain('"content":"sealed"');
    // An auditor with the home's keys replays to the live state.
    const before = new ReadModels();
    replayLog(eventsDir(relay.home), before, undefined, undefined, homeKeyFor(relay.home));
    expect(before.phoneThreads.snapshot()).toEqual(relay.loop.models.phoneThreads.snapshot());
    expect(before.notifications.snapshot()).toEqual(relay.loop.models.notifications.snapshot());

    const dry = await call(relay, 'POST', '/console/api/personal-data/forget', { device: aPrefix, dry_run: true });
    expect(dry.body).toMatchObject({ ok: true, dry_run: true, seq: null });
    expect(dry.body.keys).toBeGreaterThan(0);
    expect(readEvents(relay.home).some((e) => e.type === 'personal.forgotten')).toBe(false);
    const view = (await call(relay, 'GET', '/console/api/personal-data')).body;
    expect(view.devices.map((d: Json) => d.device).sort()).toEqual([aPrefix, bPrefix].sort());
    expect(JSON.stringify(view)).not.toMatch(/"key":"[A-Za-z0-9+/=]{40,}"/);

    const forgot = await call(relay, 'POST', '/console/api/personal-data/forget', { device: aPrefix });
    expect(forgot.status).toBe(200);
    expect(forgot.body).toMatchObject({ ok: true, dry_run: false, keys: dry.body.keys });

    // The relay: A's content reads as forgotten, B's as sent; the queue has nothing of A left to deliver.
    const after = (await call(relay, 'GET', '/notifications/recent')).body.notifications as Json[];
    expect(after.find((n) => n.package_name === 'com.bank')).toMatchObject({ title: null, text: null });
    expect(after.find((n) => n.package_name === 'com.chat')).toMatchObject({ text: 'charlie stays' });
    const threads = JSON.stringify((await call(relay, 'GET', '/console/api/threads')).body);
    for (const s of A_SECRETS) expect(threads).not.toContain(s);
    // The event: its scope, by whom, the keys; never content.
    const ev = readEvents(relay.home).find((e) => e.type === 'personal.forgotten')!;
    expect(ev).toMatchObject({ actor: 'operator', data: { scope: 'device', device: aPrefix, before: null } });
    expect((ev.data.keys as string[]).every((k) => k.startsWith(`${aPrefix}:`))).toBe(true);
    // At rest: A's keys are gone from the key file; the snapshots written before are gone, the new one has none of A.
    const keyFile = fs.readFileSync(path.join(relay.home, 'relay', 'personal-keys.json'), 'utf8');
    for (const k of ev.data.keys as string[]) expect(keyFile).not.toContain(k);
    const snaps = fs.readdirSync(path.join(relay.home, 'relay', 'snapshots'));
    expect(snaps).toHaveLength(1);
    const cipher = new SnapshotCipher(Secrets.load(path.join(relay.home, 'relay')).derivedKey('snapshot-encryption'));
    const snapText = cipher.decrypt(
      (JSON.parse(fs.readFileSync(path.join(relay.home, 'relay', 'snapshots', snaps[0]), 'utf8')) as { body: string }).body,
    )!;
    for (const s of A_SECRETS) expect(snapText).not.toContain(s);
    expect(snapText).toContain('charlie stays');
    // The chain is intact; a replay (with the keys left) equals the live state, and B's content is as it was.
    expect(() => verifyLog(eventsDir(relay.home))).not.toThrow();
    const replayed = new ReadModels();
    replayLog(eventsDir(relay.home), replayed, undefined, undefined, homeKeyFor(relay.home));
    expect(replayed.phoneThreads.snapshot()).toEqual(relay.loop.models.phoneThreads.snapshot());
    expect(replayed.notifications.snapshot()).toEqual(relay.loop.models.notifications.snapshot());
    const bNow = replayed.notifications.recent().find((n) => n.tokenPrefix === bPrefix);
    expect(bNow).toEqual(before.notifications.recent().find((n) => n.tokenPrefix === bPrefix));
    // A restart (snapshot + the rest) still shows A's content as forgotten and B's as sent.
    a.close();
    b.close();
    relay = await relay.restart();
    // (The subscriber is a socket: it resets at a restart.)
    expect(relay.loop.models.phoneThreads.snapshot()).toEqual({ ...replayed.phoneThreads.snapshot(), subscriber: null });
    expect(relay.loop.models.phoneThreads.threadList()[0]).toMatchObject({ chatId: 'plans', title: null });
  });

  it('"svc relay events forget" works on the home when no relay runs (dry run first), and verify still passes', async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const { a, b } = await personalTraffic(relay);
    a.close();
    b.close();
    const home = relay.home;
    await relay.close();
    const env = { SVC_HOME: home, RELAY_PORT: '1' };
    const dry = await svc(['relay', 'events', 'forget', '--before', '2099-01-01'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/would forget the content sealed under \d+ data keys \(the home, no relay runs\); add --yes/);
    const run = await svc(['relay', 'events', 'forget', '--before', '2099-01-01', '--yes', '--json'], env);
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout) as Json;
    expect(answer).toMatchObject({ ok: true, via: 'files', dry_run: false });
    expect(answer.keys).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'relay', 'personal-keys.json'), 'utf8')).keys).toEqual({});
    expect((await svc(['relay', 'events', 'verify', '--json'], env)).code).toBe(0);
    // Notifications reset at each start; the Thread content is what a restart shows as forgotten.
    relay = await startRelay({ home, env: { PHONE_ENABLED: '1' } });
    expect(relay.loop.models.phoneThreads.repliesAfter(0)).toEqual([expect.objectContaining({ text: '', forgotten: true })]);
    expect(JSON.stringify(relay.loop.models.phoneThreads.snapshot())).not.toMatch(/secret plan bravo|reply echo|Plan delta/);
    expect(readEvents(home).filter((e) => e.type === 'personal.forgotten')).toHaveLength(1);
  });

  it('revoking with forget forgets that device; retention forgets by age; bad requests are refused with codes', async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1', RELAY_PERSONAL_DATA_RETENTION_DAYS: '1' } });
    const { a, aPrefix, b, bPrefix } = await personalTraffic(relay);
    const revoked = await call(relay, 'POST', `/console/api/sessions/${aPrefix}/revoke`, { forget: true });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ ok: true, revoked: aPrefix });
    expect(revoked.body.forgotten_keys).toBeGreaterThan(0);
    expect(readEvents(relay.home).find((e) => e.type === 'personal.forgotten')?.data).toMatchObject({ scope: 'revoked', device: aPrefix });
    expect(relay.loop.models.notifications.recent().find((n) => n.tokenPrefix === bPrefix)?.text).toBe('charlie stays');

    for (const [body, code] of [
      [{}, 'personal.no_scope'],
      [{ device: '../etc' }, 'personal.bad_device'],
      [{ device: 'ab' }, 'personal.bad_device'],
      [{ before: 'yesterday' }, 'personal.bad_time'],
      [{ before: '9'.repeat(100) }, 'personal.bad_time'],
      [{ device: aPrefix, dry_run: 'yes' }, 'personal.bad_flag'],
    ] as const) {
      const r = await call(relay, 'POST', '/console/api/personal-data/forget', body);
      expect([r.status, r.body.ok, r.body.code]).toEqual([400, false, code]);
    }
    expect((await call(relay, 'POST', '/console/api/personal-data/forget', { device: bPrefix }, REMOTE)).status).toBe(403);
    expect((await call(relay, 'GET', '/console/api/personal-data', undefined, REMOTE)).status).toBe(403);

    // Two days on, the retention sweep forgets B's content as well (by the system).
    relay.clock.advance(2 * 86_400_000);
    await relay.sweep();
    await relay.sweep();
    const retention = readEvents(relay.home).filter((e) => e.type === 'personal.forgotten' && e.data.scope === 'retention');
    expect(retention).toHaveLength(1);
    expect(retention[0].actor).toBe('system');
    expect(relay.loop.models.notifications.recent().find((n) => n.tokenPrefix === bPrefix)).toMatchObject({ text: null, forgotten: true });
    a.close();
    b.close();
  });
});
