import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import { createRelay } from '../../apps/relay/src/relay';
import { loadConfig } from '../../apps/relay/src/common/config/config';
import { bearer, pairPhone, Phone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { eventually, leftoversAfter, Screen, sessionLeftovers } from '../support/terminal-screen';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

const SHELL = path.join(__dirname, '../fixtures/bash-norc');
jest.setTimeout(20_000);

async function attach(phone: Phone, payload: Record<string, unknown> = {}, id = `a-${Math.random()}`) {
  phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24, ...payload }, id);
  return phone.next((f) => f.id === id);
}

describe('terminal channel', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ config: { terminalShell: SHELL, terminalGraceSeconds: 600 } });
  });
  afterAll(() => relay?.close());

  it('attaches a real shell, runs echo and reads its output', async () => {
    const { phone, prefix } = await pairPhone(relay);
    const screen = new Screen(phone);
    const ok = await attach(phone);
    expect(ok).toMatchObject({
      channel: 'terminal',
      type: 'terminal.attached',
      payload: { session_name: 'main', shell: SHELL, cols: 80, rows: 24, reattach: false, tmux_available: false },
    });
    const pid = ok.payload.pid as number;
    expect(pid).toBeGreaterThan(1);
    phone.send('terminal', 'terminal.input', { data: 'echo hi-$((40+2)) $TERM\r' });
    await screen.waitFor(/hi-42 xterm-256color/);
    phone.send('terminal', 'terminal.kill', {}, 'k1');
    const done = await phone.next((f) => f.id === 'k1');
    expect(done.payload).toMatchObject({ session_name: 'main', reason: 'client kill' });
    const opened = readEvents(relay.home).find((e) => e.type === 'terminal.opened' && e.data.pid === pid);
    expect(opened).toMatchObject({
      actor: `device:${prefix}`,
      data: { tokenPrefix: prefix, deviceId: expect.stringMatching(/^dev-/), sessionName: 'main', shell: SHELL },
    });
    phone.close();
  });

  it('resizes the pty: stty size follows', async () => {
    const { phone } = await pairPhone(relay);
    const screen = new Screen(phone);
    await attach(phone, { cols: 100, rows: 30 });
    phone.send('terminal', 'terminal.input', { data: 'stty size\r' });
    await screen.waitFor(/[\r\n]30 100\r\n/);
    phone.send('terminal', 'terminal.resize', { cols: 132, rows: 43 });
    phone.send('terminal', 'terminal.input', { data: 'stty size\r' });
    await screen.waitFor(/[\r\n]43 132\r\n/);
    phone.send('terminal', 'terminal.resize', { cols: 0, rows: 43 }, 'bad');
    expect((await phone.next((f) => f.id === 'bad')).payload).toMatchObject({ code: 'terminal.bad_size' });
    phone.send('terminal', 'terminal.kill', {}, 'k');
    await phone.next((f) => f.id === 'k');
    phone.close();
  });

  it('never mangles a multi-byte character split across reads', async () => {
    const { phone } = await pairPhone(relay);
    const screen = new Screen(phone);
    await attach(phone);
    // 20000 x 3-byte characters with no newline: the pty's reads cut them at arbitrary bytes.
    phone.send('terminal', 'terminal.input', { data: "yes '€' | head -n 20000 | tr -d '\\n'; echo; echo END-$((1+1))\r" });
    await screen.waitFor(/END-2/, 'main', 10000);
    const out = screen.of();
    expect(out).not.toContain('\uFFFD');
    expect((out.match(/€/g) ?? []).length).toBeGreaterThanOrEqual(20000);
    phone.send('terminal', 'terminal.kill', {}, 'k');
    await phone.next((f) => f.id === 'k');
    phone.close();
  });

  it('detach keeps the shell; re-attach (also from a new socket) replays recent output', async () => {
    const { phone, token } = await pairPhone(relay);
    const screen = new Screen(phone);
    const first = await attach(phone, { session_name: 'work' });
    phone.send('terminal', 'terminal.input', { session_name: 'work', data: 'echo mark-$((6*7))\r' });
    await screen.waitFor(/mark-42/, 'work');
    phone.send('terminal', 'terminal.detach', { session_name: 'work' }, 'd');
    const det = await phone.next((f) => f.id === 'd');
    expect(det).toMatchObject({ type: 'terminal.detached', payload: { session_name: 'work', reason: 'client detach', grace_seconds: 600 } });
    phone.send('terminal', 'terminal.input', { session_name: 'work', data: 'x' }, 'in');
    expect((await phone.next((f) => f.id === 'in')).payload).toMatchObject({ code: 'terminal.not_attached' });
    phone.send('terminal', 'terminal.list', {}, 'l');
    const list = await phone.next((f) => f.id === 'l');
    expect(list.type).toBe('terminal.sessions');
    expect(list.payload.sessions).toEqual([
      expect.objectContaining({ name: 'work', session_name: 'work', attached: 0, live: true, pid: first.payload.pid }),
    ]);

    phone.send('terminal', 'terminal.attach', { session_name: 'work' }, 'again');
    const again = await phone.next((f) => f.id === 'again');
    expect(again.payload).toMatchObject({ reattach: true, pid: first.payload.pid, cols: 80, rows: 24 });
    // The ack carries the scrollback too (what the desktop CLI paints); the app paints the output frame.
    expect(again.payload).toMatchObject({ tmux_available: false, replay: expect.stringContaining('mark-42') });
    const replay = await phone.next((f) => f.type === 'terminal.output' && f.payload.replay === true);
    expect(replay.payload.data).toContain('mark-42');

    // The socket drops: the shell is detached, not killed; a new socket of the same session re-attaches.
    phone.close();
    await phone.closed;
    await eventually(() => relay.loop.models.terminal.shellByName(token.slice(0, 8), 'work')?.connId === null, 3000, 'detach on disconnect');
    const phone2 = await Phone.connect(relay.url);
    await phone2.auth({ session_token: token });
    const screen2 = new Screen(phone2);
    const third = await attach(phone2, { session_name: 'work', cols: 120, rows: 40 });
    expect(third.payload).toMatchObject({ reattach: true, pid: first.payload.pid, cols: 120, rows: 40 });
    await screen2.waitFor(/mark-42/, 'work');
    phone2.send('terminal', 'terminal.input', { session_name: 'work', data: 'echo still-$((1+2))\r' });
    await screen2.waitFor(/still-3/, 'work');
    phone2.send('terminal', 'terminal.kill', { session_name: 'work' }, 'k');
    await phone2.next((f) => f.id === 'k');
    phone2.close();
  });

  it('ends a detached shell when its grace period passes (manual clock), reaping its jobs', async () => {
    const { phone } = await pairPhone(relay);
    const screen = new Screen(phone);
    const ok = await attach(phone, { session_name: 'g' });
    const pid = ok.payload.pid as number;
    phone.send('terminal', 'terminal.input', { session_name: 'g', data: "sleep 300 & sh -c 'sleep 301; true' & echo bg-$((2+2))\r" });
    await screen.waitFor(/bg-4/, 'g');
    await eventually(() => sessionLeftovers(pid).length >= 4, 3000, 'background jobs');
    phone.send('terminal', 'terminal.detach', { session_name: 'g' }, 'd');
    await phone.next((f) => f.id === 'd');
    relay.clock.advanceSeconds(599);
    await relay.sweep();
    expect(sessionLeftovers(pid).length).toBeGreaterThan(0);
    relay.clock.advanceSeconds(2);
    await relay.sweep();
    await eventually(() => readEvents(relay.home).some((e) => e.type === 'terminal.closed' && e.data.pid === pid), 5000, 'terminal.closed');
    const closed = readEvents(relay.home).find((e) => e.type === 'terminal.closed' && e.data.pid === pid)!;
    expect(closed.data).toMatchObject({ reason: 'grace_expired', sessionName: 'g' });
    expect(await leftoversAfter(pid)).toEqual({ session: [], zombies: [] });
    phone.close();
  });

  it('kill reaps the whole session: no orphans, no zombies', async () => {
    const { phone } = await pairPhone(relay);
    const screen = new Screen(phone);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    phone.send('terminal', 'terminal.input', { data: "sleep 400 & (trap '' HUP; sleep 401) & sh -c 'sleep 402; true' & echo jobs-$((3+3))\r" });
    await screen.waitFor(/jobs-6/);
    await eventually(() => sessionLeftovers(pid).length >= 5, 3000, 'jobs running');
    phone.send('terminal', 'terminal.kill', {}, 'k');
    const done = await phone.next((f) => f.id === 'k', 8000);
    expect(done.payload).toMatchObject({ reason: 'client kill' });
    expect(await leftoversAfter(pid)).toEqual({ session: [], zombies: [] });
    const closed = readEvents(relay.home).find((e) => e.type === 'terminal.closed' && e.data.pid === pid);
    expect(closed?.data).toMatchObject({ reason: 'killed', sessionName: 'main' });
    phone.close();
  });

  it('refuses a 5th shell per device', async () => {
    const { phone } = await pairPhone(relay);
    for (const name of ['s1', 's2', 's3', 's4']) expect((await attach(phone, { session_name: name })).type).toBe('terminal.attached');
    const fifth = await attach(phone, { session_name: 's5' });
    expect(fifth).toMatchObject({ type: 'terminal.error', payload: { code: 'terminal.limit', limit: 4 } });
    expect(String(fifth.payload.message)).toMatch(/at most 4/);
    // Another device is not affected by this one's shells.
    const other = await pairPhone(relay);
    expect((await attach(other.phone, { session_name: 's5' })).type).toBe('terminal.attached');
    for (const [p, name] of [
      [phone, 's1'],
      [phone, 's2'],
      [phone, 's3'],
      [phone, 's4'],
      [other.phone, 's5'],
    ] as const) {
      p.send('terminal', 'terminal.kill', { session_name: name }, `k-${name}`);
      await p.next((f) => f.id === `k-${name}`, 8000);
    }
    phone.close();
    other.phone.close();
  });

  it('revoking the session mid-stream closes its shells at once; the phone is told terminal.detached {reason: revoked} before 4403', async () => {
    const { phone, token, prefix } = await pairPhone(relay);
    const screen = new Screen(phone);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    phone.send('terminal', 'terminal.input', { data: 'while true; do echo tick; sleep 0.02; done\r' });
    await screen.waitFor(/tick\r\ntick/);
    const res = await fetch(`${relay.url}/sessions/${prefix}`, { method: 'DELETE', headers: bearer(token) });
    expect(res.status).toBe(200);
    expect(await phone.closed).toBe(4403);
    // Issue 41 item 7: before, the socket closed before the shell's exit and nothing said so (the desktop CLI's
    // `shell --raw` hung). The CLI exits on terminal.detached (1 for this reason).
    const last = phone.frames.filter((f) => f.type !== 'terminal.output').slice(-2);
    expect(last).toEqual([
      expect.objectContaining({ type: 'terminal.detached', payload: { session_name: 'main', reason: 'revoked', exit_code: null, signal: null } }),
      expect.objectContaining({ type: 'session.revoked', payload: { reason: 'revoked', revoked_self: true } }),
    ]);
    await eventually(() => readEvents(relay.home).some((e) => e.type === 'terminal.closed' && e.data.pid === pid), 5000, 'terminal.closed');
    expect(readEvents(relay.home).find((e) => e.type === 'terminal.closed' && e.data.pid === pid)?.data).toMatchObject({
      reason: 'revoked',
      tokenPrefix: prefix,
    });
    // A loop that forks as fast as its children die can leave its last child to init (which reaps it on
    // a real host); what must never remain is a live process, or a zombie of the relay's own.
    expect(await leftoversAfter(pid, { liveOnly: true })).toEqual({ session: [], zombies: [] });
  });

  it('dropping the terminal grant (PATCH) closes the shell but keeps the socket', async () => {
    const { phone, token, prefix } = await pairPhone(relay);
    const screen = new Screen(phone);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    phone.send('terminal', 'terminal.input', { data: 'echo ready-$((5+5))\r' });
    await screen.waitFor(/ready-10/);
    const res = await fetch(`${relay.url}/sessions/${prefix}`, {
      method: 'PATCH',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ grants: { terminal: false } }),
    });
    expect(res.status).toBe(200);
    const det = await phone.next((f) => f.type === 'terminal.detached', 5000);
    expect(det.payload).toMatchObject({ session_name: 'main', reason: 'grant_removed' });
    expect((await leftoversAfter(pid)).session).toEqual([]);
    const refused = await attach(phone);
    expect(refused).toMatchObject({ channel: 'terminal', type: 'terminal.error', payload: { code: 'grant_required', grant: 'terminal' } });
    phone.close();
  });

  it('grant expiry closes the shell when the sweep records it', async () => {
    const { phone } = await pairPhone(relay, { terms: { grants: { terminal: 3600 } } });
    const screen = new Screen(phone);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    phone.send('terminal', 'terminal.input', { data: 'echo ready-$((5+5))\r' });
    await screen.waitFor(/ready-10/);
    relay.clock.advanceSeconds(3601);
    await relay.sweep();
    const det = await phone.next((f) => f.type === 'terminal.detached', 5000);
    expect(det.payload).toMatchObject({ reason: 'grant_expired' });
    expect((await leftoversAfter(pid)).session).toEqual([]);
    phone.close();
  });

  it('a phone without the terminal grant gets terminal.error (on the channel) and no shell', async () => {
    const { phone, prefix } = await pairPhone(relay, { terms: { grants: { terminal: false } } });
    const f = await attach(phone);
    expect(f).toMatchObject({ channel: 'terminal', type: 'terminal.error', payload: { code: 'grant_required', grant: 'terminal' } });
    expect(relay.loop.models.terminal.shellsOf(prefix)).toEqual([]);
    phone.close();
  });

  it('answers bad frames with terminal.error and keeps the socket', async () => {
    const { phone } = await pairPhone(relay);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['terminal.attach', { session_name: '../etc', cols: 80, rows: 24 }, 'terminal.bad_session_name'],
      ['terminal.attach', { cols: 'wide', rows: 24 }, 'terminal.bad_size'],
      ['terminal.input', { session_name: 'nope', data: 'ls\r' }, 'terminal.not_found'],
      ['terminal.kill', { session_name: 'nope' }, 'terminal.not_found'],
      ['terminal.frobnicate', {}, 'terminal.unknown_type'],
    ];
    for (const [type, payload, code] of cases) {
      phone.send('terminal', type, payload, `e-${type}-${code}`);
      const f = await phone.next((x) => x.id === `e-${type}-${code}`);
      expect(f).toMatchObject({ channel: 'terminal', type: 'terminal.error', payload: { code } });
    }
    await attach(phone);
    phone.send('terminal', 'terminal.input', { data: 7 }, 'num');
    expect((await phone.next((x) => x.id === 'num')).payload).toMatchObject({ code: 'terminal.bad_input' });
    phone.send('terminal', 'terminal.input', { data: 'x'.repeat(64 * 1024 + 1) }, 'big');
    expect((await phone.next((x) => x.id === 'big')).payload).toMatchObject({ code: 'terminal.input_too_large' });
    phone.send('terminal', 'terminal.kill', {}, 'k');
    await phone.next((f) => f.id === 'k');
    phone.close();
  });

  it('never writes input or output into events or logs', async () => {
    const { phone } = await pairPhone(relay);
    const screen = new Screen(phone);
    await attach(phone);
    phone.send('terminal', 'terminal.input', { data: 'echo SECRET-INPUT-$((7*6)) sk-livekey\r' });
    await screen.waitFor(/SECRET-INPUT-42/);
    phone.send('terminal', 'terminal.kill', {}, 'k');
    await phone.next((f) => f.id === 'k');
    const all = JSON.stringify(readEvents(relay.home)) + relay.logs.join('');
    expect(all).not.toContain('SECRET-INPUT');
    expect(all).not.toContain('sk-livekey');
    phone.close();
  });

  it('the operator lists open shells on loopback and can end one', async () => {
    const { phone, prefix } = await pairPhone(relay);
    const ok = await attach(phone, { session_name: 'op' });
    const list = (await (await fetch(`${relay.url}/terminal/shells`)).json()) as { shells: Array<Record<string, unknown>> };
    const mine = list.shells.find((s) => s.token_prefix === prefix)!;
    expect(mine).toMatchObject({ session_name: 'op', pid: ok.payload.pid, attached: true, shell: SHELL, paused: false });
    // The console's terminal page reads the same view.
    const page = (await (await fetch(`${relay.url}/console/api/terminal`)).json()) as { shells: Array<Record<string, unknown>> };
    expect(page.shells.find((s) => s.token_prefix === prefix)).toEqual(mine);
    const res = await fetch(`${relay.url}/terminal/shells/${String(mine.shell_id)}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    const det = await phone.next((f) => f.type === 'terminal.detached', 5000);
    expect(det.payload).toMatchObject({ session_name: 'op', reason: 'killed' });
    const missing = await fetch(`${relay.url}/terminal/shells/${String(mine.shell_id)}`, { method: 'DELETE' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ ok: false, code: 'terminal.not_found' });
    phone.close();
  });
});

describe('terminal lifecycle', () => {
  it('replaying the log from seq 1 gives the live terminal projection', async () => {
    const relay = await startRelay({ config: { terminalShell: SHELL } });
    const { phone } = await pairPhone(relay);
    for (const name of ['r1', 'r2', 'r3']) await attach(phone, { session_name: name });
    phone.send('terminal', 'terminal.detach', { session_name: 'r2' }, 'd');
    await phone.next((f) => f.id === 'd');
    phone.send('terminal', 'terminal.kill', { session_name: 'r3' }, 'k');
    await phone.next((f) => f.id === 'k', 8000);
    await relay.loop.drain();
    const replayed = new ReadModels();
    replayLog(eventsDir(relay.home), replayed);
    expect(replayed.terminal.snapshot()).toEqual(relay.loop.models.terminal.snapshot());
    const shells = replayed.terminal.allShells().map((s) => [s.sessionName, s.connId === null]);
    expect(shells.sort()).toEqual([
      ['r1', false],
      ['r2', true],
    ]);
    phone.close();
    await relay.close();
  });

  it('a relay shutdown leaves no child process and records every close', async () => {
    const relay = await startRelay({ config: { terminalShell: SHELL } });
    const { phone } = await pairPhone(relay);
    const screen = new Screen(phone);
    const pids: number[] = [];
    for (const name of ['a', 'b']) {
      const ok = await attach(phone, { session_name: name });
      pids.push(ok.payload.pid as number);
      phone.send('terminal', 'terminal.input', { session_name: name, data: `sleep 500 & echo up-${name}-$((1+1))\r` });
      await screen.waitFor(new RegExp(`up-${name}-2`), name);
    }
    phone.send('terminal', 'terminal.detach', { session_name: 'b' }, 'd');
    await phone.next((f) => f.id === 'd');
    await relay.close();
    for (const pid of pids) expect(await leftoversAfter(pid)).toEqual({ session: [], zombies: [] });
    const closed = readEvents(relay.home).filter((e) => e.type === 'terminal.closed');
    expect(closed.map((e) => e.data.pid).sort()).toEqual([...pids].sort());
    expect(closed.every((e) => e.data.reason === 'shutdown')).toBe(true);
    // A restart starts with no shells (the projection is ephemeral) and replays to the same state.
    const again = await relay.restart();
    expect(again.loop.models.terminal.allShells()).toEqual([]);
    await again.close();
  });

  it('refuses to start with a shell that is not an absolute executable path', async () => {
    const home = tempHome();
    const base = loadConfig({ SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0' });
    await expect(createRelay({ config: { ...base, terminalShell: 'bash' } })).rejects.toThrow(/must be an absolute path, got "bash"/);
    const plain = path.join(home, 'not-a-shell');
    fs.writeFileSync(plain, '#!/bin/sh\n', { mode: 0o644 });
    await expect(createRelay({ config: { ...base, terminalShell: plain } })).rejects.toThrow(/is not an executable file/);
    await expect(createRelay({ config: { ...base, terminalShell: home } })).rejects.toThrow(/is not an executable file/);
    await expect(createRelay({ config: { ...base, terminalShell: '/nonexistent/zsh' } })).rejects.toThrow(/is not an executable file/);
    expect(() => loadConfig({ SVC_HOME: home, RELAY_TERMINAL_GRACE_SECONDS: 'ten' })).toThrow(/RELAY_TERMINAL_GRACE_SECONDS/);
    expect(loadConfig({ SVC_HOME: home, RELAY_TERMINAL_SHELL: '/bin/sh', SHELL: '/bin/bash' }).terminalShell).toBe('/bin/sh');
  });
});
