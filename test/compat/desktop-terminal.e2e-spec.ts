import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nextCode, Phone, registerCode, tempHome, type Frame, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { eventually } from '../support/terminal-screen';

/**
 * The desktop CLI (desktop/src) on the terminal and tui channels, frame for frame. What it sends and
 * what it reads is cited per fixture; the assertions are the fields it reads and the types it checks.
 */

const SHELL = path.join(__dirname, '../fixtures/bash-norc');
const AGENT_CHECKOUT = path.join(__dirname, '../fixtures/agent-checkout');
jest.setTimeout(30_000);

/** transport/RelayTransport.ts:562-604 (sendAuth): the CLI's auth payload, identity from deviceIdentity.ts:90. */
function cliAuth(credentials: { pairing_code: string } | { session_token: string }): Record<string, unknown> {
  return {
    ...credentials,
    device_name: 'build-host',
    device_hostname: 'build-host',
    device_model: 'x86_64',
    device_platform: 'Linux 6.1.0',
    client_surface: 'desktop',
    device_form_factor: 'desktop',
    device_id: randomUUID(),
    supports: { typed_stream_events: true, event_schema_version: 1 },
  };
}

/** Every envelope the CLI sends carries a fresh uuid id (RelayTransport.ts:611). */
function cliSend(phone: Phone, channel: string, type: string, payload: Record<string, unknown>): string {
  const id = randomUUID();
  phone.send(channel, type, payload, id);
  return id;
}

/**
 * A CLI login: system/auth, then on auth.ok the CLI at once sends `tui.attach {cols, rows}`
 * (RelayTransport.ts:739-742) and `desktop/workspace` (RelayTransport.ts:1176, type without prefix).
 */
async function cliLogin(relay: TestRelay, credentials: { pairing_code: string } | { session_token: string }) {
  const phone = await Phone.connect(relay.url);
  phone.send('system', 'auth', cliAuth(credentials), randomUUID());
  const ok = await phone.next((f) => f.channel === 'system' && (f.type === 'auth.ok' || f.type === 'auth.fail'));
  expect(ok.type).toBe('auth.ok');
  const tuiAttach = cliSend(phone, 'tui', 'tui.attach', { cols: 120, rows: 30 });
  cliSend(phone, 'desktop', 'workspace', { cwd: '/home/u/project', repo_name: 'project', git_branch: 'main', hostname: 'build-host' });
  return { phone, token: ok.payload.session_token as string, tuiAttach };
}

async function pairCode(relay: TestRelay, terms: Record<string, unknown> = {}): Promise<string> {
  const code = nextCode();
  expect((await registerCode(relay, code, terms)).status).toBe(200);
  return code;
}

/** The CLI ends the socket on any `tui.error` (RelayTransport.ts:833-839): none may come. */
const noTuiError = (phone: Phone) => expect(phone.frames.filter((f) => f.type === 'tui.error')).toEqual([]);

/** The CLI's terminal listener reads `terminal.*` frames of the channel (shell.ts:500-528). */
function output(phone: Phone): { text: () => string; waitFor: (re: RegExp) => Promise<void> } {
  let text = '';
  phone.ws.on('message', (raw) => {
    const f = JSON.parse(raw.toString()) as Frame;
    if (f.channel === 'terminal' && f.type === 'terminal.output') text += String(f.payload.data);
  });
  return { text: () => text, waitFor: (re) => eventually(() => re.test(text), 10_000, `output matching ${re}`) };
}

describe('compat: desktop CLI, default configuration (no TUI gateway)', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    // HOME is a temp dir: no agent checkout anywhere the relay looks.
    relay = await startRelay({ env: { HOME: tempHome() }, config: { terminalShell: SHELL, tuiCommand: null } });
  });
  afterAll(() => relay.close('test done'));

  it('login: tui.attach does not end the session; each gateway request fails at once, saying what to configure', async () => {
    const { phone, tuiAttach } = await cliLogin(relay, { pairing_code: await pairCode(relay) });
    // RelayTransport.ts:805 logs tui.attached; nothing in it is fatal.
    const attached = await phone.next((f) => f.id === tuiAttach);
    expect(attached).toMatchObject({ channel: 'tui', type: 'tui.attached', payload: { available: false, code: 'tui.not_configured' } });
    // chat.ts:655 / tools.ts waitForReady: a `gateway.ready` event, read from payload.params (RelayTransport.ts:817-828).
    const ready = await phone.next((f) => f.type === 'tui.rpc.event');
    expect(ready.payload.params).toMatchObject({ type: 'gateway.ready' });
    // RelayTransport.ts:1138: request() wraps JSON-RPC in tui.rpc.request with ids r1, r2...
    const t0 = Date.now();
    cliSend(phone, 'tui', 'tui.rpc.request', { id: 'r1', jsonrpc: '2.0', method: 'session.create', params: { cols: 120 } });
    const res = await phone.next((f) => f.type === 'tui.rpc.response' && f.payload.id === 'r1');
    expect(Date.now() - t0).toBeLessThan(2000);
    // dispatchRpc (RelayTransport.ts:845-858): `error.message` becomes the rejected request's message.
    const error = res.payload.error as { message: string; data: { code: string } };
    expect(error.message).toMatch(/RELAY_TUI_COMMAND/);
    expect(error.message).toMatch(/SVC_PYTHON_SRC_ROOT/);
    expect(error.data.code).toBe('tui.not_configured');
    // Whatever the workspace hint gets, it is not a system/error (which the CLI drops).
    expect(phone.frames.filter((f) => f.channel === 'system')).toEqual([]);
    noTuiError(phone);
    // The socket is alive: the shell channel works on it.
    const id = cliSend(phone, 'terminal', 'terminal.list', {});
    expect((await phone.next((f) => f.id === id)).type).toBe('terminal.sessions');
    phone.close();
  });

  it('shell: attach, input, resize, detach, re-attach with replay; sessions lists it; kill ends it', async () => {
    const login = await cliLogin(relay, { pairing_code: await pairCode(relay) });
    const phone = login.phone;
    const out = output(phone);
    // shell.ts:455-457: attach payload {cols, rows, session_name} ('default' unless --session / stored).
    const attach = cliSend(phone, 'terminal', 'terminal.attach', { cols: 120, rows: 30, session_name: 'default' });
    const ack = await phone.next((f) => f.id === attach);
    // shell.ts:205-219: session_name must be a non-empty string; pid number, shell string, tmux_available and
    // reattach booleans, replay a string (printed at once, shell.ts:491).
    expect(ack.type).toBe('terminal.attached');
    expect(ack.payload).toMatchObject({ session_name: 'default', reattach: false, tmux_available: false, cols: 120, rows: 30 });
    expect(typeof ack.payload.pid).toBe('number');
    expect(typeof ack.payload.shell).toBe('string');
    // The CLI drops output between the ack and its output listener: the new shell's prompt is in the ack.
    expect(String(ack.payload.replay)).toMatch(/[$#] $/);
    // shell.ts:544: raw keystrokes as {session_name, data}; Enter in raw mode is \r.
    cliSend(phone, 'terminal', 'terminal.input', { session_name: 'default', data: 'echo hi-$((40+2))\r' });
    await out.waitFor(/hi-42/);
    // shell.ts:698: SIGWINCH → terminal.resize {session_name, cols, rows}.
    cliSend(phone, 'terminal', 'terminal.resize', { session_name: 'default', cols: 100, rows: 40 });
    cliSend(phone, 'terminal', 'terminal.input', { session_name: 'default', data: 'stty size\r' });
    await out.waitFor(/40 100/);
    // shell.ts:600: Ctrl+A . → terminal.detach {session_name}; the CLI exits without waiting.
    const detach = cliSend(phone, 'terminal', 'terminal.detach', { session_name: 'default' });
    expect((await phone.next((f) => f.id === detach)).payload).toMatchObject({ session_name: 'default', reason: 'client detach' });
    phone.close();

    // `sessions` (sessions.ts:136-143): a new login with the stored token, terminal.list {}.
    const lister = await cliLogin(relay, { session_token: login.token });
    const list = cliSend(lister.phone, 'terminal', 'terminal.list', {});
    const sessions = await lister.phone.next((f) => f.id === list);
    expect(sessions.type).toBe('terminal.sessions');
    // sessions.ts:51-70: `name` (items without it are dropped), `attached` a number, `created_at` epoch seconds.
    const items = sessions.payload.sessions as Array<Record<string, unknown>>;
    expect(items).toEqual([expect.objectContaining({ name: 'default', attached: 0, live: true, owned_by_client: false, pid: ack.payload.pid })]);
    expect(typeof items[0].created_at).toBe('number');
    lister.phone.close();

    // `shell` again (or `sessions resume default`): re-attached, with the scrollback in `replay`.
    const again = await cliLogin(relay, { session_token: login.token });
    const out2 = output(again.phone);
    const reattach = cliSend(again.phone, 'terminal', 'terminal.attach', { cols: 120, rows: 30, session_name: 'default' });
    const ack2 = await again.phone.next((f) => f.id === reattach);
    expect(ack2.payload).toMatchObject({ session_name: 'default', reattach: true, pid: ack.payload.pid });
    expect(String(ack2.payload.replay)).toContain('hi-42');
    cliSend(again.phone, 'terminal', 'terminal.input', { session_name: 'default', data: 'echo back-$((1+1))\r' });
    await out2.waitFor(/back-2/);
    noTuiError(again.phone);
    again.phone.close();

    // `sessions kill default` (sessions.ts:206-209): waits for terminal.detached (or terminal.error), 15 s.
    const killer = await cliLogin(relay, { session_token: login.token });
    const kill = cliSend(killer.phone, 'terminal', 'terminal.kill', { session_name: 'default' });
    const killed = await killer.phone.next((f) => f.id === kill);
    expect(killed).toMatchObject({ type: 'terminal.detached', payload: { session_name: 'default', reason: 'client kill' } });
    const missing = cliSend(killer.phone, 'terminal', 'terminal.kill', { session_name: 'default' });
    expect(await killer.phone.next((f) => f.id === missing)).toMatchObject({ type: 'terminal.error', payload: { code: 'terminal.not_found' } });
    killer.phone.close();
  });

  it('shell: the shell ending by itself is `eof` (the CLI exits 0 on it, 1 on anything else: shell.ts:519)', async () => {
    const { phone } = await cliLogin(relay, { pairing_code: await pairCode(relay) });
    const attach = cliSend(phone, 'terminal', 'terminal.attach', { cols: 80, rows: 24, session_name: 'default' });
    await phone.next((f) => f.id === attach);
    cliSend(phone, 'terminal', 'terminal.input', { session_name: 'default', data: 'exit\r' });
    const ended = await phone.next((f) => f.type === 'terminal.detached');
    expect(ended.payload).toMatchObject({ session_name: 'default', reason: 'eof' });
    phone.close();
  });

  it('a missing grant is answered on the channel, at once (the CLI ignores system/error and would wait 15-30 s)', async () => {
    const { phone, tuiAttach } = await cliLogin(relay, { pairing_code: await pairCode(relay, { grants: { terminal: false, tui: false } }) });
    // No tui grant: still not fatal for the CLI; requests say which grant is missing.
    expect(await phone.next((f) => f.id === tuiAttach)).toMatchObject({
      type: 'tui.attached',
      payload: { available: false, code: 'grant_required', grant: 'tui' },
    });
    cliSend(phone, 'tui', 'tui.rpc.request', { id: 'r1', jsonrpc: '2.0', method: 'tools.list', params: {} });
    expect((await phone.next((f) => f.type === 'tui.rpc.response')).payload).toMatchObject({ id: 'r1', error: { data: { code: 'grant_required' } } });
    // RelayTransport.ts:303 sendResize: nothing to resize, and nothing fatal either.
    cliSend(phone, 'tui', 'tui.resize', { cols: 100, rows: 30 });
    const t0 = Date.now();
    // sessions.ts:93 / shell.ts:222: terminal.error {message} ends the wait with the message.
    const list = cliSend(phone, 'terminal', 'terminal.list', {});
    const err = await phone.next((f) => f.id === list);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(err).toMatchObject({ channel: 'terminal', type: 'terminal.error', payload: { code: 'grant_required', grant: 'terminal' } });
    expect(String(err.payload.message)).toMatch(/terminal/);
    const attach = cliSend(phone, 'terminal', 'terminal.attach', { cols: 80, rows: 24, session_name: 'default' });
    expect(await phone.next((f) => f.id === attach)).toMatchObject({ type: 'terminal.error', payload: { session_name: 'default' } });
    noTuiError(phone);
    expect(phone.frames.filter((f) => f.channel === 'system')).toEqual([]);
    phone.close();
  });
});

describe('compat: desktop CLI with the agent installed (found without configuration)', () => {
  it('the agent checkout in <SVC_HOME>/svc-agent is run as `python -m tui_gateway.entry`; JSON-RPC flows', async () => {
    const home = tempHome();
    fs.cpSync(AGENT_CHECKOUT, path.join(home, 'svc-agent'), { recursive: true });
    const relay = await startRelay({ home, env: { HOME: tempHome() }, config: { terminalShell: SHELL, tuiCommand: null } });
    try {
      const { phone, tuiAttach } = await cliLogin(relay, { pairing_code: await pairCode(relay) });
      const attached = await phone.next((f) => f.id === tuiAttach);
      expect(attached).toMatchObject({ type: 'tui.attached', payload: { available: true, server_version: expect.any(String) } });
      expect(typeof attached.payload.pid).toBe('number');
      const ready = await phone.next((f) => f.type === 'tui.rpc.event', 15_000);
      const root = path.join(home, 'svc-agent');
      expect(ready.payload.params).toMatchObject({ type: 'gateway.ready', payload: { cwd: root, src_root: root, cols: '120' } });
      expect(String((ready.payload.params as { payload: { pythonpath: string } }).payload.pythonpath).split(path.delimiter)[0]).toBe(root);
      cliSend(phone, 'tui', 'tui.rpc.request', { id: 'r1', jsonrpc: '2.0', method: 'session.create', params: {} });
      expect((await phone.next((f) => f.type === 'tui.rpc.response')).payload).toEqual({
        jsonrpc: '2.0',
        id: 'r1',
        result: { session_id: 'fixture-session' },
      });
      // RelayTransport.ts:303 sendResize: tui.resize {cols, rows} → the gateway's terminal.resize request.
      cliSend(phone, 'tui', 'tui.resize', { cols: 90, rows: 20 });
      const resized = await phone.next((f) => f.type === 'tui.rpc.response' && String(f.payload.id).startsWith('resize-'));
      expect(resized.payload).toMatchObject({ result: { ok: true } });
      noTuiError(phone);
      phone.close();
    } finally {
      await relay.close('test done');
    }
  });

  it('HERMES_PYTHON_SRC_ROOT (the agent CLI’s own variable) points at a checkout anywhere', async () => {
    const relay = await startRelay({
      env: { HOME: tempHome(), HERMES_PYTHON_SRC_ROOT: AGENT_CHECKOUT },
      config: { terminalShell: SHELL, tuiCommand: null },
    });
    try {
      const { phone, tuiAttach } = await cliLogin(relay, { pairing_code: await pairCode(relay) });
      expect(await phone.next((f) => f.id === tuiAttach)).toMatchObject({ payload: { available: true } });
      const ready = await phone.next((f) => f.type === 'tui.rpc.event', 15_000);
      expect(ready.payload.params).toMatchObject({ type: 'gateway.ready', payload: { src_root: AGENT_CHECKOUT } });
      phone.close();
    } finally {
      await relay.close('test done');
    }
  });
});
