import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RelayConfig } from '../../apps/relay/src/common/config/relay-config';
import { pairPhone, type Phone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, type Json, operatorFetch } from '../support/http';
import { homeKeyFor, P_SECRET, Q_TEXT, queuedThenDelivered } from '../support/personal-keys';
import { svc } from '../support/cli';
import { eventually, Screen } from '../support/terminal-screen';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

const SHELL = path.join(__dirname, '../fixtures/bash-norc');
const RECORDING: RelayConfig['terminalRecording'] = { enabled: true, input: false, maxBytes: 64 * 1024 * 1024, totalBytes: 1024 * 1024 * 1024 };

/** Every file under a directory, as one string (what an attacker with a copy of the home could read). */
function everythingUnder(dir: string): string {
  let all = '';
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) all += fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1') + '\n';
  }
  return all;
}

/** Opens shell `name` and echoes an AWS secret in it (the pty echoes what is typed, and the shell prints it). */
async function echoSecret(phone: Phone, screen: Screen, name: string, secret: string): Promise<void> {
  phone.send('terminal', 'terminal.attach', { session_name: name, cols: 80, rows: 24 }, `a-${name}`);
  await phone.next((f) => f.id === `a-${name}`);
  phone.send('terminal', 'terminal.input', {
    session_name: name,
    data: `export AWS_SECRET_ACCESS_KEY=${secret}; echo "set $AWS_SECRET_ACCESS_KEY"\r`,
  });
  await screen.waitFor(new RegExp(`set ${secret}`), name);
}

/** Every route that reads a Thread message, and the console's pages, as one string. */
async function everyRoute(relay: TestRelay, messageId: string): Promise<string> {
  const paths = [
    '/phone/threads',
    '/phone/threads/ops',
    '/phone/outbound',
    `/phone/outbound/${messageId}`,
    '/console/api/threads',
    '/console/api/events?limit=500',
  ];
  let all = '';
  for (const p of paths) {
    const r = await call(relay, 'GET', p);
    expect([p, r.status]).toEqual([p, 200]);
    all += JSON.stringify(r.body);
  }
  return all;
}

/**
 * Issue 34, finding 8: a Thread message queued while no phone was subscribed was sealed under the host's
 * key; once delivered to phone P, forgetting P left it readable (also after a restart). A device's forget
 * now reaches what it received: the key that message went under is destroyed with P's own.
 */
describe("a device's forget reaches what it received", () => {
  let relay: TestRelay;
  afterEach(() => relay?.close());

  it('a message queued for no phone, then delivered to P, is unreadable on every route, in the log and after a restart once P is forgotten; what Q got later stays', async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    const { p, q, forP, forQ } = await queuedThenDelivered(relay);
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'phone.message_delivered')
        .map((e) => e.data.tokenPrefix),
    ).toEqual([p.prefix, q.prefix]);
    expect(await everyRoute(relay, forP)).toContain(P_SECRET);

    const dry = await call(relay, 'POST', '/console/api/personal-data/forget', { device: p.prefix, dry_run: true });
    const forgot = await call(relay, 'POST', '/console/api/personal-data/forget', { device: p.prefix });
    expect(forgot.status).toBe(200);
    expect(forgot.body.keys).toBe(dry.body.keys);
    expect(forgot.body.keys).toBeGreaterThan(0);

    const check = async (r: TestRelay) => {
      const seen = await everyRoute(r, forP);
      expect(seen).not.toContain('AKIAP1SECRET');
      expect(seen).toContain(Q_TEXT);
      expect((await call(r, 'GET', `/phone/outbound/${forP}`)).body).toMatchObject({ text: '', title: null, state: 'delivered' });
      // An auditor replaying the log with the home's keys finds it forgotten too.
      const replayed = new ReadModels();
      replayLog(eventsDir(r.home), replayed, undefined, undefined, homeKeyFor(r.home));
      expect(replayed.phoneThreads.message(forP)).toMatchObject({ text: '', forgotten: true });
      expect(replayed.phoneThreads.message(forQ)).toMatchObject({ text: Q_TEXT });
    };
    await check(relay);
    p.phone.close();
    q.phone.close();
    relay = await relay.restart();
    await check(relay);

    // With no relay running, "svc relay events forget --device Q" on the home reaches Q's message the same way.
    const home = relay.home;
    await relay.close();
    const env = { SVC_HOME: home, RELAY_PORT: '1' };
    const asked = await svc(['relay', 'events', 'forget', `--device=${q.prefix}`, '--json'], env);
    expect({ code: asked.code, stderr: asked.stderr }).toEqual({ code: 0, stderr: '' });
    const cliDry = JSON.parse(asked.stdout) as Json;
    const cli = await svc(['relay', 'events', 'forget', `--device=${q.prefix}`, '--yes', '--json'], env);
    expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(cli.stdout)).toMatchObject({ via: 'files', keys: cliDry.keys });
    relay = await startRelay({ home, env: { PHONE_ENABLED: '1' } });
    expect(await everyRoute(relay, forQ)).not.toContain(Q_TEXT);
  });

  it('a recording holding an echoed secret is sealed at rest and played while its key lives; forgetting its device, or revoking a live one with forget, leaves it gone (404)', async () => {
    relay = await startRelay({ config: { terminalShell: SHELL, terminalRecording: RECORDING } });
    const a = await pairPhone(relay, { device: { device_id: 'phone-a', device_name: 'Phone A' } });
    const screenA = new Screen(a.phone);
    await echoSecret(a.phone, screenA, 'main', 'wJalrXUtnFEMIK7MDENGaaaa');
    a.phone.send('terminal', 'terminal.kill', { session_name: 'main' }, 'k');
    await a.phone.next((f) => f.id === 'k');
    const [saved] = readEvents(relay.home).filter((e) => e.type === 'terminal.recording_saved');
    const id = String(saved.data.recordingId);
    const file = path.join(relay.home, 'relay', 'recordings', `${id}.cast`);

    // At rest nothing under the home holds it; the console's player still gets the asciicast.
    await relay.loop.drain();
    expect(everythingUnder(relay.home)).not.toContain('wJalrXUtnFEMIK7MDENGaaaa');
    const played = await fetch(`${relay.url}/console/api/terminal/recordings/${id}`);
    expect(played.status).toBe(200);
    expect(played.headers.get('content-type')).toContain('application/x-asciicast');
    const cast = await played.text();
    expect(JSON.parse(cast.split('\n')[0])).toMatchObject({ version: 2, width: 80, height: 24 });
    expect(cast).toContain('set wJalrXUtnFEMIK7MDENGaaaa');
    const copy = fs.readFileSync(file);

    const forgot = await call(relay, 'POST', '/console/api/personal-data/forget', { device: a.prefix });
    expect(forgot.status).toBe(200);
    const gone = async (r: TestRelay, recordingId: string) => {
      // An event is on disk before the read models have it: what the routes answer is checked once it is durable.
      await r.loop.drain();
      expect(fs.existsSync(path.join(r.home, 'relay', 'recordings', `${recordingId}.cast`))).toBe(false);
      const list = (await call(r, 'GET', '/console/api/terminal/recordings')).body;
      expect((list.recordings as Json[]).map((x) => x.recording_id)).not.toContain(recordingId);
      const res = await call(r, 'GET', `/console/api/terminal/recordings/${recordingId}`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ ok: false, code: 'terminal.recording_forgotten' });
      expect(readEvents(r.home).filter((e) => e.type === 'terminal.recording_removed' && e.data.recordingId === recordingId)).toEqual([
        expect.objectContaining({ data: { recordingId, reason: 'forgotten' } }),
      ]);
    };
    // The recording goes on the forgetting's event, after the answer (its key is already gone: it cannot be played meanwhile).
    const removed = (recordingId: string) => () =>
      readEvents(relay.home).some((e) => e.type === 'terminal.recording_removed' && e.data.recordingId === recordingId);
    await eventually(removed(id), 10_000);
    await gone(relay, id);
    // A copy taken before names a key the home no longer holds.
    const keyOfCopy = /"key":"([^"]+)"/.exec(copy.subarray(0, 300).toString('latin1'))![1];
    expect(homeKeyFor(relay.home)(keyOfCopy)).toBeUndefined();

    // Revoked with forget while its shell runs: the shell ends, and its recording does not stay.
    const b = await pairPhone(relay, { device: { device_id: 'phone-b', device_name: 'Phone B' } });
    const screenB = new Screen(b.phone);
    await echoSecret(b.phone, screenB, 'work', 'wJalrXUtnFEMIK7MDENGbbbb');
    const shellB = relay.loop.models.terminal.shellByName(b.prefix, 'work')!.shellId;
    const revoked = await call(relay, 'POST', `/console/api/sessions/${b.prefix}/revoke`, { forget: true });
    expect(revoked.status).toBe(200);
    await eventually(removed(shellB), 10_000);
    await gone(relay, shellB);
    await relay.loop.drain();
    expect(everythingUnder(relay.home)).not.toMatch(/wJalrXUtnFEMIK7MDENG/);
    a.phone.close();
    relay = await relay.restart();
    await gone(relay, id);
    await gone(relay, shellB);
    expect(relay.logs.join('')).not.toContain('"statusCode":500');
  });

  it('a recording from before sealing is sealed at the next start (the log then vouches for the sealed file) and goes with its device', async () => {
    relay = await startRelay({ config: { terminalShell: SHELL, terminalRecording: RECORDING }, sealPersonal: false });
    const a = await pairPhone(relay, { device: { device_id: 'phone-a', device_name: 'Phone A' } });
    await echoSecret(a.phone, new Screen(a.phone), 'old', 'wJalrXUtnFEMIK7MDENGcccc');
    a.phone.send('terminal', 'terminal.kill', { session_name: 'old' }, 'k');
    await a.phone.next((f) => f.id === 'k');
    a.phone.close();
    const [plain] = readEvents(relay.home).filter((e) => e.type === 'terminal.recording_saved');
    const id = String(plain.data.recordingId);
    const file = path.join(relay.home, 'relay', 'recordings', `${id}.cast`);
    expect(plain.data.sealedWith).toBeUndefined();
    expect(fs.readFileSync(file, 'utf8')).toContain('wJalrXUtnFEMIK7MDENGcccc');
    const home = relay.home;
    await relay.close();

    relay = await startRelay({ home, config: { terminalShell: SHELL, terminalRecording: RECORDING } });
    expect(fs.readFileSync(file, 'latin1')).not.toContain('wJalrXUtnFEMIK7MDENGcccc');
    const again = readEvents(home).filter((e) => e.type === 'terminal.recording_saved' && e.data.recordingId === id);
    expect(again).toHaveLength(2);
    expect(again[1].data).toMatchObject({ tokenPrefix: a.prefix, sealedWith: expect.stringMatching(new RegExp(`^${a.prefix}:`)) });
    expect((await svc(['relay', 'events', 'verify'], { SVC_HOME: home, RELAY_PORT: '1' })).code).toBe(0);
    const played = await fetch(`${relay.url}/console/api/terminal/recordings/${id}`);
    expect(await played.text()).toContain('set wJalrXUtnFEMIK7MDENGcccc');

    expect((await call(relay, 'POST', '/console/api/personal-data/forget', { device: a.prefix })).body.keys).toBe(1);
    await eventually(() => readEvents(home).some((e) => e.type === 'terminal.recording_removed' && e.data.recordingId === id), 10_000);
    expect(fs.existsSync(file)).toBe(false);
    expect((await call(relay, 'GET', `/console/api/terminal/recordings/${id}`)).body).toMatchObject({ code: 'terminal.recording_forgotten' });
  });

  it('a recording whose device was forgotten with no relay running is removed at the next start', async () => {
    relay = await startRelay({ config: { terminalShell: SHELL, terminalRecording: RECORDING } });
    const a = await pairPhone(relay, { device: { device_id: 'phone-a', device_name: 'Phone A' } });
    await echoSecret(a.phone, new Screen(a.phone), 'main', 'wJalrXUtnFEMIK7MDENGdddd');
    a.phone.send('terminal', 'terminal.kill', { session_name: 'main' }, 'k');
    await a.phone.next((f) => f.id === 'k');
    a.phone.close();
    const id = relay.loop.models.terminalRecordings.list()[0].recordingId;
    const home = relay.home;
    await relay.close();
    const cli = await svc(['relay', 'events', 'forget', `--device=${a.prefix}`, '--yes'], { SVC_HOME: home, RELAY_PORT: '1' });
    expect(cli.code).toBe(0);
    relay = await startRelay({ home, config: { terminalShell: SHELL, terminalRecording: RECORDING } });
    expect(fs.existsSync(path.join(home, 'relay', 'recordings', `${id}.cast`))).toBe(false);
    expect((await call(relay, 'GET', `/console/api/terminal/recordings/${id}`)).body).toMatchObject({ code: 'terminal.recording_forgotten' });
    expect((await svc(['relay', 'events', 'verify'], { SVC_HOME: home, RELAY_PORT: '1' })).code).toBe(0);
  });
});
