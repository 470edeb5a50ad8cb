import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RelayConfig } from '../../apps/relay/src/common/config/relay-config';
import { pairPhone, type Phone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';
import { Screen } from '../support/terminal-screen';
import { svc } from '../support/cli';
import { castLinesOf, openedCastText } from '../support/recordings';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

const SHELL = path.join(__dirname, '../fixtures/bash-norc');
jest.setTimeout(30_000);

const RECORDING: RelayConfig['terminalRecording'] = { enabled: true, input: false, maxBytes: 64 * 1024 * 1024, totalBytes: 1024 * 1024 * 1024 };
const recordingsOf = (relay: TestRelay) => path.join(relay.home, 'relay', 'recordings');
const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const savedEvents = (relay: TestRelay) => readEvents(relay.home).filter((e) => e.type === 'terminal.recording_saved');

/** Opens shell `name`, runs `commands` (each waited for by its echoed marker), and kills it: its recording is saved by then. */
async function recordShell(phone: Phone, name: string, commands: Array<[string, RegExp]>, size = { cols: 80, rows: 24 }): Promise<string> {
  const screen = new Screen(phone);
  phone.send('terminal', 'terminal.attach', { session_name: name, ...size }, `a-${name}`);
  await phone.next((f) => f.id === `a-${name}`);
  for (const [input, marker] of commands) {
    phone.send('terminal', 'terminal.input', { session_name: name, data: input });
    await screen.waitFor(marker, name);
  }
  phone.send('terminal', 'terminal.kill', { session_name: name }, `k-${name}`);
  await phone.next((f) => f.id === `k-${name}`);
  return screen.of(name);
}

describe('terminal recordings', () => {
  describe('a recorded shell', () => {
    let relay: TestRelay;
    let recordingId: string;
    let prefix: string;
    beforeAll(async () => {
      relay = await startRelay({ config: { terminalShell: SHELL, terminalRecording: RECORDING } });
      const paired = await pairPhone(relay);
      const phone = paired.phone;
      prefix = paired.prefix;
      const screen = new Screen(phone);
      phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24 }, 'a');
      await phone.next((f) => f.id === 'a');
      phone.send('terminal', 'terminal.input', { data: 'echo rec-$((40+2))\r' });
      await screen.waitFor(/rec-42/);
      phone.send('terminal', 'terminal.resize', { cols: 100, rows: 30 });
      phone.send('terminal', 'terminal.input', { data: 'stty size\r' });
      await screen.waitFor(/30 100/);
      // Typed with echo off, as a password prompt would: it must not reach the recording.
      phone.send('terminal', 'terminal.input', { data: 'stty -echo; read -r s; stty echo; echo got-${#s}\r' });
      await new Promise((r) => setTimeout(r, 200));
      phone.send('terminal', 'terminal.input', { data: 'hunter2-secret\r' });
      await screen.waitFor(/got-14/);
      phone.send('terminal', 'terminal.kill', {}, 'k');
      await phone.next((f) => f.id === 'k');
      phone.close();
      const saved = savedEvents(relay);
      expect(saved).toHaveLength(1);
      recordingId = String(saved[0].data.recordingId);
      expect(saved[0].data).toMatchObject({ tokenPrefix: prefix, sessionName: 'main', input: false, truncated: false });
    });
    afterAll(() => relay?.close());

    it('writes an asciicast v2 recording sealed under its device key (0600 in a 0700 directory): the output and the resize, never the typed input', () => {
      const file = path.join(recordingsOf(relay), `${recordingId}.cast`);
      expect(fs.statSync(recordingsOf(relay)).mode & 0o777).toBe(0o700);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      // On disk nothing of the shell is in plain text; the first line names the data key, never content.
      expect(fs.readFileSync(file, 'latin1')).not.toMatch(/rec-42|30 100|got-14|bash/);
      const sealedWith = String(savedEvents(relay)[0].data.sealedWith);
      expect(sealedWith).toMatch(new RegExp(`^${prefix}:2026-03-01T12:[0-9a-f]{8}$`));
      expect(JSON.parse(fs.readFileSync(file, 'latin1').split('\n')[0])).toEqual({ svc_sealed_cast: 1, key: sealedWith });
      const [header, ...events] = castLinesOf(openedCastText(relay.home, recordingId)!) as [
        Record<string, unknown>,
        ...Array<[number, string, string]>,
      ];
      // asciicast v2 (docs.asciinema.org/manual/asciicast/v2): the header, then [time, code, data] lines.
      expect(header).toEqual({
        version: 2,
        width: 80,
        height: 24,
        timestamp: Date.parse('2026-03-01T12:00:00.000Z') / 1000,
        env: { SHELL, TERM: 'xterm-256color' },
        title: expect.stringContaining('main'),
      });
      expect(events.length).toBeGreaterThan(2);
      for (const [t, code, data] of events) {
        expect(typeof t).toBe('number');
        expect(['o', 'r']).toContain(code);
        expect(typeof data).toBe('string');
      }
      expect(events.map(([t]) => t)).toEqual([...events.map(([t]) => t)].sort((a, b) => a - b));
      const output = events
        .filter(([, c]) => c === 'o')
        .map(([, , d]) => d)
        .join('');
      expect(output).toContain('rec-42');
      expect(output).toContain('30 100');
      expect(output).toContain('got-14');
      expect(events.filter(([, c]) => c === 'r').map(([, , d]) => d)).toEqual(['100x30']);
      expect(openedCastText(relay.home, recordingId)).not.toContain('hunter2');
    });

    it('the saved event vouches for the file: its SHA-256 and size, after terminal.closed', () => {
      const file = path.join(recordingsOf(relay), `${recordingId}.cast`);
      const events = readEvents(relay.home);
      const saved = events.find((e) => e.type === 'terminal.recording_saved')!;
      expect(saved.data).toMatchObject({ recordingId, shellId: recordingId, sha256: sha256(file), sizeBytes: fs.statSync(file).size });
      expect(saved.data.durationMs).toBeGreaterThan(0);
      const closed = events.find((e) => e.type === 'terminal.closed' && e.data.shellId === recordingId)!;
      expect(closed.seq).toBeLessThan(saved.seq);
      // Never content in the log or the relay's own log lines.
      expect(JSON.stringify(events)).not.toContain('rec-42');
      expect(relay.logs.join('')).not.toContain('rec-42');
    });

    it('/health says recording is on; the console lists it and serves it as application/x-asciicast', async () => {
      expect(await (await fetch(`${relay.url}/health`)).json()).toMatchObject({ terminal_recording: true });
      const list = (await (await fetch(`${relay.url}/console/api/terminal/recordings`)).json()) as Record<string, any>;
      expect(list).toMatchObject({
        ok: true,
        settings: { enabled: true, input: false, max_bytes: RECORDING.maxBytes, total_max_bytes: RECORDING.totalBytes },
      });
      expect(list.recordings).toEqual([
        expect.objectContaining({ recording_id: recordingId, session_name: 'main', input: false, truncated: false, recovered: false }),
      ]);
      const res = await fetch(`${relay.url}/console/api/terminal/recordings/${recordingId}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/x-asciicast');
      // The player gets the asciicast opened; the list's digest is the stored (sealed) file's, as verify checks it.
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.toString('utf8')).toBe(openedCastText(relay.home, recordingId));
      expect(Number(res.headers.get('content-length'))).toBe(body.length);
      expect(list.recordings[0]).toMatchObject({ sealed: true, sha256: sha256(path.join(recordingsOf(relay), `${recordingId}.cast`)) });
    });

    it('refuses traversal and malformed ids (400), unknown ids (404 JSON), and any caller but loopback', async () => {
      const get = (url: string, remoteAddress = '127.0.0.1') => relay.app.inject({ method: 'GET', url, remoteAddress, headers: relay.op });
      for (const id of ['..%2F..%2Frelay%2Fsecret.key', '..%2Fevents', `${recordingId}.cast`, `${recordingId.toUpperCase()}`, '%00']) {
        const res = await get(`/console/api/terminal/recordings/${id}`);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ ok: false, code: 'terminal.bad_recording_id' });
      }
      for (const url of [
        '/console/api/terminal/recordings/../../relay/secret.key',
        '/console/api/terminal/recordings/%2e%2e/%2e%2e/relay/secret.key',
        // Past the router's parameter length: no route at all.
        `/console/api/terminal/recordings/${'x'.repeat(500)}`,
      ]) {
        const res = await get(url);
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
        expect(res.body).not.toMatch(/^[0-9a-f]{64}$/m);
      }
      const unknown = await get('/console/api/terminal/recordings/00000000-0000-4000-8000-000000000000');
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ ok: false, code: 'terminal.recording_not_found' });
      for (const url of ['/console/api/terminal/recordings', `/console/api/terminal/recordings/${recordingId}`]) {
        const lan = await get(url, '192.168.1.20');
        expect(lan.statusCode).toBe(403);
        expect(lan.json()).toMatchObject({ code: 'auth.loopback_only' });
        expect(lan.body).not.toContain('rec-42');
      }
      expect(relay.logs.join('')).not.toContain('"statusCode":500');
    });

    it('svc relay events verify passes, then names a changed recording (expected and actual digest) and a deleted one', async () => {
      const env = { SVC_HOME: relay.home };
      const ok = await svc(['relay', 'events', 'verify'], env);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('1 terminal recording match their digests');
      const file = path.join(recordingsOf(relay), `${recordingId}.cast`);
      const original = fs.readFileSync(file);
      const expected = sha256(file);
      const changed = Buffer.from(original);
      changed[changed.length - 20] ^= 0x01;
      fs.writeFileSync(file, changed);
      const bad = await svc(['relay', 'events', 'verify'], env);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(`changed: ${recordingId}.cast: expected sha256 ${expected}`);
      expect(bad.stderr).toContain(`actual ${sha256(file)}`);
      const json = await svc(['relay', 'events', 'verify', '--json'], env);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: true,
        recordings: { ok: false, changed: [{ recording_id: recordingId, expected_sha256: expected }] },
      });
      fs.rmSync(file);
      const gone = await svc(['relay', 'events', 'verify'], env);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain(`gone: ${recordingId}.cast is saved in the log, but the file is missing`);
      fs.writeFileSync(file, original, { mode: 0o600 });
      expect((await svc(['relay', 'events', 'verify'], env)).code).toBe(0);
    });
  });

  it('is off by default: no recordings directory, /health and the console say so', async () => {
    const relay = await startRelay({ config: { terminalShell: SHELL } });
    try {
      const { phone } = await pairPhone(relay);
      await recordShell(phone, 'main', [['echo off-$((1+1))\r', /off-2/]]);
      phone.close();
      expect(fs.existsSync(recordingsOf(relay))).toBe(false);
      expect(savedEvents(relay)).toEqual([]);
      expect(await (await fetch(`${relay.url}/health`)).json()).toMatchObject({ terminal_recording: false });
      const list = (await (await fetch(`${relay.url}/console/api/terminal/recordings`)).json()) as Record<string, any>;
      expect(list).toMatchObject({ settings: { enabled: false }, recordings: [] });
    } finally {
      await relay.close();
    }
  });

  it('past the total cap removes the oldest recordings first, each with its own event, and verify accepts the removals', async () => {
    // Each recording is about 1-2 KB; the cap holds two at most.
    const relay = await startRelay({ config: { terminalShell: SHELL, terminalRecording: { ...RECORDING, totalBytes: 4000 } } });
    try {
      const { phone } = await pairPhone(relay);
      const ids: string[] = [];
      for (const n of [1, 2, 3, 4]) {
        await recordShell(phone, `s${n}`, [[`printf 'x%.0s' $(seq 1 600); echo; echo cap-$((${n}*11))\r`, new RegExp(`cap-${n * 11}`)]]);
        ids.push(String(savedEvents(relay).at(-1)!.data.recordingId));
      }
      phone.close();
      const events = readEvents(relay.home);
      const removed = events.filter((e) => e.type === 'terminal.recording_removed');
      expect(removed.length).toBeGreaterThanOrEqual(1);
      expect(removed.map((e) => e.data)).toEqual(ids.slice(0, removed.length).map((recordingId) => ({ recordingId, reason: 'space' })));
      const left = fs.readdirSync(recordingsOf(relay)).sort();
      expect(left).toEqual(
        ids
          .slice(removed.length)
          .map((id) => `${id}.cast`)
          .sort(),
      );
      const total = left.reduce((n, f) => n + fs.statSync(path.join(recordingsOf(relay), f)).size, 0);
      expect(total).toBeLessThanOrEqual(4000);
      expect(relay.loop.models.terminalRecordings.totalBytes()).toBe(total);
      const verify = await svc(['relay', 'events', 'verify'], { SVC_HOME: relay.home });
      expect(verify.code).toBe(0);
      expect(verify.stdout).toContain(`removed by the relay: ${removed.length} past the total cap`);
    } finally {
      await relay.close();
    }
  });

  it('a recording left by a relay that stopped mid-shell is saved at the next start as recovered, under its shell', async () => {
    const relay = await startRelay({ config: { terminalShell: SHELL, terminalRecording: RECORDING } });
    const crashed = tempHome();
    try {
      const { phone, prefix } = await pairPhone(relay);
      const screen = new Screen(phone);
      phone.send('terminal', 'terminal.attach', { session_name: 'work', cols: 80, rows: 24 }, 'a');
      const ack = await phone.next((f) => f.id === 'a');
      phone.send('terminal', 'terminal.input', { session_name: 'work', data: 'echo before-crash-$((7*6))\r' });
      await screen.waitFor(/before-crash-42/, 'work');
      // The timer flushes within a second; then the home is copied as a crash would leave it (no lock holder).
      const shellId = relay.loop.models.terminal.shellByName(prefix, 'work')!.shellId;
      const deadline = Date.now() + 5000;
      while (!openedCastText(relay.home, shellId)?.includes('before-crash-42') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await relay.loop.drain();
      fs.cpSync(relay.home, crashed, { recursive: true, filter: (src) => !path.basename(src).includes('lock') });
      // A write cut short by the crash: a torn last chunk (its length says more than follows).
      fs.appendFileSync(path.join(crashed, 'relay', 'recordings', `${shellId}.cast`), Buffer.from([0, 0, 1, 0, 7, 7, 7]));
      expect(ack.payload.pid).toBeGreaterThan(1);
      phone.close();
    } finally {
      await relay.close();
    }
    const again = await startRelay({ home: crashed, config: { terminalShell: SHELL, terminalRecording: RECORDING } });
    try {
      const file = fs.readdirSync(path.join(crashed, 'relay', 'recordings')).map((f) => path.join(crashed, 'relay', 'recordings', f))[0];
      const saved = savedEvents(again);
      expect(saved).toHaveLength(1);
      expect(saved[0].data).toMatchObject({
        sessionName: 'work',
        recovered: true,
        truncated: true,
        sha256: sha256(file),
        sizeBytes: fs.statSync(file).size,
      });
      expect(fs.readFileSync(file).subarray(-7)).not.toEqual(Buffer.from([0, 0, 1, 0, 7, 7, 7]));
      const text = openedCastText(crashed, path.basename(file, '.cast'))!;
      expect(castLinesOf(text).length).toBeGreaterThan(1);
      expect(text).toContain('before-crash-42');
      const list = (await (await fetch(`${again.url}/console/api/terminal/recordings`)).json()) as Record<string, any>;
      expect(list.recordings).toEqual([expect.objectContaining({ session_name: 'work', recovered: true })]);
      expect((await svc(['relay', 'events', 'verify'], { SVC_HOME: crashed })).code).toBe(0);
    } finally {
      await again.close();
    }
    // Started again: nothing new is recovered twice.
    const third = await startRelay({ home: crashed, config: { terminalShell: SHELL, terminalRecording: RECORDING } });
    try {
      expect(savedEvents(third)).toHaveLength(1);
    } finally {
      await third.close();
    }
  });
});
