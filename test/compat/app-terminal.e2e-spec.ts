import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { pairPhone, Phone, type Frame, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { eventually } from '../support/terminal-screen';

/**
 * The phone app's terminal tabs (app/src/main/kotlin/com/hermesandroid/relay/viewmodel/TerminalViewModel.kt),
 * frame for frame: what a tab sends, and the fields and reasons its handler reads.
 */

const SHELL = path.join(__dirname, '../fixtures/bash-norc');
jest.setTimeout(30_000);

/** TerminalViewModel.kt:322 sessionNameFor: `hermes-<deviceId>-tab<tabId>`, the device id a UUID (AuthManager.kt:776). */
const tabName = (deviceId: string, tab: number) => `hermes-${deviceId}-tab${tab}`;

/** The app's envelopes carry no id (TerminalViewModel.kt:729-737: Envelope(channel, type, payload)). */
const send = (phone: Phone, type: string, payload: Record<string, unknown>) => phone.send('terminal', type, payload);

/** handleEnvelope (TerminalViewModel.kt:624-628) routes by payload.session_name. */
const forTab = (phone: Phone, name: string, type: string, timeoutMs?: number) =>
  phone.next((f) => f.channel === 'terminal' && f.type === type && f.payload.session_name === name, timeoutMs);

/** terminal.output (TerminalViewModel.kt:648-660): data is a string, re-encoded as UTF-8 for xterm.js. */
function tabOutput(phone: Phone, name: string) {
  let text = '';
  phone.ws.on('message', (raw) => {
    const f = JSON.parse(raw.toString()) as Frame;
    if (f.type === 'terminal.output' && f.payload.session_name === name && typeof f.payload.data === 'string') text += f.payload.data;
  });
  return { text: () => text, waitFor: (re: RegExp) => eventually(() => re.test(text), 10_000, `tab output matching ${re}`) };
}

/** TerminalViewModel.kt:681: only these reasons leave the tab without an error overlay. */
const USER_INITIATED = ['client detach', 'client kill'];

describe('compat: app terminal tabs', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ config: { terminalShell: SHELL, tuiCommand: null } });
  });
  afterAll(() => relay.close('test done'));

  it('a tab: attach, output, input, special keys, resize; closing the tab detaches without an error', async () => {
    const deviceId = randomUUID();
    const { phone } = await pairPhone(relay, { device: { device_id: deviceId } });
    const name = tabName(deviceId, 1);
    const out = tabOutput(phone, name);
    // sendAttach (TerminalViewModel.kt:608-615): {session_name, cols, rows}.
    send(phone, 'terminal.attach', { session_name: name, cols: 80, rows: 24 });
    const ack = await forTab(phone, name, 'terminal.attached');
    // TerminalViewModel.kt:631-646: pid (int), shell (string), cols, rows (ints), tmux_available (boolean).
    expect(ack.payload).toMatchObject({ session_name: name, cols: 80, rows: 24, tmux_available: false });
    expect(Number.isInteger(ack.payload.pid)).toBe(true);
    expect(typeof ack.payload.shell).toBe('string');
    // The prompt reaches the tab as output (the app does not read the ack's `replay`).
    await out.waitFor(/[$#] $/);
    // sendInput (TerminalViewModel.kt:529-532): {session_name, data}; sticky CTRL sends control bytes.
    send(phone, 'terminal.input', { session_name: name, data: 'echo tab-$((6*7))\r' });
    await out.waitFor(/tab-42/);
    // sendKey (TerminalViewModel.kt:551-554): escape sequences as data; ARROW_UP recalls the last line.
    send(phone, 'terminal.input', { session_name: name, data: '\u001b[A' });
    send(phone, 'terminal.input', { session_name: name, data: '\r' });
    await eventually(() => (out.text().match(/tab-42/g) ?? []).length >= 2, 10_000, 'history recall');
    // resize (TerminalViewModel.kt:572-576): {session_name, cols, rows} while attached.
    send(phone, 'terminal.resize', { session_name: name, cols: 60, rows: 20 });
    send(phone, 'terminal.input', { session_name: name, data: 'stty size\r' });
    await out.waitFor(/20 60/);
    // closeTab (TerminalViewModel.kt:356-358): terminal.detach {session_name}; the shell is kept.
    send(phone, 'terminal.detach', { session_name: name });
    const detached = await forTab(phone, name, 'terminal.detached');
    expect(USER_INITIATED).toContain(detached.payload.reason);
    expect(detached.payload.reason).toBe('client detach');
    // terminal.sessions (TerminalViewModel.kt:712) is only logged; it lists the tab's kept shell.
    send(phone, 'terminal.list', {});
    const list = await phone.type('terminal', 'terminal.sessions');
    expect(list.payload.sessions).toEqual([expect.objectContaining({ name, session_name: name, attached: 0 })]);
    phone.close();
  });

  it('reconnect: the auth-gate replay re-attaches the same session_name and the tab repaints from output', async () => {
    const deviceId = randomUUID();
    const { phone, token } = await pairPhone(relay, { device: { device_id: deviceId } });
    const name = tabName(deviceId, 2);
    const out = tabOutput(phone, name);
    send(phone, 'terminal.attach', { session_name: name, cols: 80, rows: 24 });
    const first = await forTab(phone, name, 'terminal.attached');
    send(phone, 'terminal.input', { session_name: name, data: 'echo before-drop-$((2+3))\r' });
    await out.waitFor(/before-drop-5/);
    // The WebSocket drops (no detach sent); the app reconnects and replays its pending attach (TerminalViewModel.kt:268-290).
    phone.close();
    await phone.closed;
    await eventually(() => relay.loop.models.terminal.shellByName(token.slice(0, 8), name)?.connId === null, 3000, 'detached on drop');
    const back = await Phone.connect(relay.url);
    expect((await back.auth({ session_token: token })).type).toBe('auth.ok');
    const out2 = tabOutput(back, name);
    send(back, 'terminal.attach', { session_name: name, cols: 80, rows: 24 });
    const again = await forTab(back, name, 'terminal.attached');
    expect(again.payload).toMatchObject({ session_name: name, pid: first.payload.pid, reattach: true });
    await out2.waitFor(/before-drop-5/);
    // Killing the tab (TerminalViewModel.kt:382-384): `client kill`, no error overlay.
    send(back, 'terminal.kill', { session_name: name });
    const killed = await forTab(back, name, 'terminal.detached');
    expect(killed.payload.reason).toBe('client kill');
    // Killing the last tab reseeds one under the same name; starting it right after the kill opens a new shell.
    send(back, 'terminal.attach', { session_name: name, cols: 80, rows: 24 });
    send(back, 'terminal.kill', { session_name: name });
    send(back, 'terminal.attach', { session_name: name, cols: 80, rows: 24 });
    const first2 = await forTab(back, name, 'terminal.attached');
    const second = await forTab(back, name, 'terminal.attached');
    expect(second.payload).toMatchObject({ reattach: false });
    expect(second.payload.pid).not.toBe(first2.payload.pid);
    expect(back.frames.filter((f) => f.type === 'terminal.error')).toEqual([]);
    back.close();
  });

  it('a shell that exits by itself: `eof`', async () => {
    const deviceId = randomUUID();
    const { phone } = await pairPhone(relay, { device: { device_id: deviceId } });
    const name = tabName(deviceId, 3);
    send(phone, 'terminal.attach', { session_name: name, cols: 80, rows: 24 });
    await forTab(phone, name, 'terminal.attached');
    send(phone, 'terminal.input', { session_name: name, data: 'exit 0\r' });
    expect((await forTab(phone, name, 'terminal.detached')).payload.reason).toBe('eof');
    phone.close();
  });

  it('errors name the tab (terminal.error with session_name), so the app shows them on it', async () => {
    const deviceId = randomUUID();
    const { phone } = await pairPhone(relay, { device: { device_id: deviceId } });
    const name = tabName(deviceId, 4);
    // Input to a tab that is not attached (TerminalViewModel.kt:692-710 binds errors by session_name).
    send(phone, 'terminal.input', { session_name: name, data: 'x' });
    const err = await forTab(phone, name, 'terminal.error');
    expect(err.payload).toMatchObject({ code: 'terminal.not_found', message: expect.any(String) });
    phone.close();
  });

  it('without the terminal grant the tab gets terminal.error at once, not a system/error it never reads', async () => {
    const deviceId = randomUUID();
    const { phone } = await pairPhone(relay, { device: { device_id: deviceId }, terms: { grants: { terminal: false } } });
    const name = tabName(deviceId, 1);
    const t0 = Date.now();
    send(phone, 'terminal.attach', { session_name: name, cols: 80, rows: 24 });
    const err = await forTab(phone, name, 'terminal.error', 2000);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(err.payload).toMatchObject({ code: 'grant_required', grant: 'terminal', message: expect.stringContaining('terminal') });
    expect(phone.frames.filter((f) => f.channel === 'system')).toEqual([]);
    phone.close();
  });
});
