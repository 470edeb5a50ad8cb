import * as path from 'node:path';
import { TuiService } from '../../apps/relay/src/tui/tui.service';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type TestRelay, type Phone } from '../support/harness';
import { eventually, leftoversAfter, sessionLeftovers } from '../support/terminal-screen';

jest.setTimeout(20_000);

const GATEWAY = path.join(__dirname, '..', 'fixtures', 'tui-gateway.js');
const command = (...flags: string[]) => [`'${process.execPath}'`, `"${GATEWAY}"`, ...flags].join(' ');

async function attach(phone: Phone, payload: Record<string, unknown> = {}, id = `t-${Math.random()}`) {
  phone.send('tui', 'tui.attach', { cols: 100, rows: 40, ...payload }, id);
  return phone.next((f) => f.id === id);
}

describe('tui channel', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ config: { terminalShell: '/bin/sh', tuiCommand: command('--noise', "--label 'two words'") } });
  });
  afterAll(() => relay?.close());

  it('starts the gateway (command split like a shell), relays JSON-RPC both ways', async () => {
    const { phone, prefix } = await pairPhone(relay);
    const ok = await attach(phone, { profile: 'work', resume_session_id: 'sess-42' });
    expect(ok).toMatchObject({ channel: 'tui', type: 'tui.attached', payload: { server_version: expect.any(String) } });
    const pid = ok.payload.pid as number;
    const ready = await phone.next((f) => f.type === 'tui.rpc.event' && (f.payload.params as { type?: string }).type === 'gateway.ready');
    expect((ready.payload.params as { payload: unknown }).payload).toEqual({
      argv: ['--noise', '--label', 'two words'],
      cols: 100,
      rows: 40,
      profile: 'work',
      resume_session_id: 'sess-42',
    });
    phone.send('tui', 'tui.rpc.request', { jsonrpc: '2.0', id: 7, method: 'echo', params: { text: 'héllo €' } });
    const res = await phone.type('tui', 'tui.rpc.response');
    expect(res.payload).toEqual({ jsonrpc: '2.0', id: 7, result: { text: 'héllo €' } });
    phone.send('tui', 'tui.rpc.request', { id: 'u1', method: 'nope' });
    expect((await phone.type('tui', 'tui.rpc.response')).payload).toMatchObject({ id: 'u1', error: { code: -32601 } });
    // Forwarded as the agent gateway's `terminal.resize` request (its answer is a response with the relay's id).
    phone.send('tui', 'tui.resize', { cols: 120, rows: 50 });
    const resized = await phone.next((f) => f.type === 'tui.rpc.event' && (f.payload.params as { type?: string }).type === 'gateway.resized');
    expect((resized.payload.params as { payload: unknown }).payload).toEqual({ cols: 120, rows: 50 });
    const resizeAck = await phone.next((f) => f.type === 'tui.rpc.response' && String(f.payload.id).startsWith('resize-'));
    expect(resizeAck.payload).toMatchObject({ result: { ok: true } });
    // The non-JSON line never reached the phone.
    expect(phone.frames.some((f) => JSON.stringify(f).includes('not JSON'))).toBe(false);
    const started = readEvents(relay.home).find((e) => e.type === 'tui.started' && e.data.pid === pid);
    expect(started).toMatchObject({ actor: `device:${prefix}`, data: { program: path.basename(process.execPath), cols: 100, rows: 40 } });
    expect(JSON.stringify(started)).not.toContain(GATEWAY);
    phone.send('tui', 'tui.detach', {}, 'd');
    expect((await phone.next((f) => f.id === 'd')).payload).toMatchObject({ reason: 'detached' });
    phone.close();
  });

  it('stderr goes to the relay log, not to the phone; the relay env secrets do not reach the gateway', async () => {
    const { phone } = await pairPhone(relay);
    process.env.RELAY_PAIRING_CODE = 'ZZ9999';
    try {
      await attach(phone);
    } finally {
      delete process.env.RELAY_PAIRING_CODE;
    }
    phone.send('tui', 'tui.rpc.request', { id: 'e', method: 'env' });
    expect((await phone.type('tui', 'tui.rpc.response')).payload).toMatchObject({ id: 'e', result: { pairing_code: null } });
    phone.send('tui', 'tui.rpc.request', { id: 1, method: 'stderr', params: { text: 'gateway-diagnostic-line' } });
    await phone.type('tui', 'tui.rpc.response');
    await eventually(() => relay.logs.join('').includes('gateway-diagnostic-line'), 3000, 'stderr in the log');
    expect(phone.frames.some((f) => JSON.stringify(f).includes('gateway-diagnostic-line'))).toBe(false);
    phone.send('tui', 'tui.detach', {}, 'd');
    await phone.next((f) => f.id === 'd');
    phone.close();
  });

  it('detach: SIGTERM, then SIGKILL after 2 s for a gateway that ignores it; its children are reaped', async () => {
    const r2 = await startRelay({ config: { terminalShell: '/bin/sh', tuiCommand: command('--ignore-term') } });
    try {
      const { phone } = await pairPhone(r2);
      const ok = await attach(phone);
      const pid = ok.payload.pid as number;
      phone.send('tui', 'tui.rpc.request', { id: 1, method: 'spawn_child' });
      const child = (await phone.type('tui', 'tui.rpc.response')).payload.result as { pid: number };
      expect(sessionLeftovers(pid).map((p) => p.pid)).toEqual(expect.arrayContaining([pid, child.pid]));
      const t0 = Date.now();
      phone.send('tui', 'tui.detach', {}, 'd');
      const det = await phone.next((f) => f.id === 'd', 8000);
      const took = Date.now() - t0;
      expect(det.payload).toMatchObject({ reason: 'detached', signal: 9 });
      expect(took).toBeGreaterThanOrEqual(1900);
      expect(took).toBeLessThan(5000);
      expect(await leftoversAfter(pid)).toEqual({ session: [], zombies: [] });
      const stopped = readEvents(r2.home).find((e) => e.type === 'tui.stopped' && e.data.pid === pid);
      expect(stopped?.data).toMatchObject({ reason: 'detached', signal: 9 });
      phone.close();
    } finally {
      await r2.close();
    }
  });

  it('the socket closing stops the gateway; a gateway exiting on its own tells the phone', async () => {
    const { phone } = await pairPhone(relay);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    phone.send('tui', 'tui.rpc.request', { id: 1, method: 'exit', params: { code: 3 } });
    // The request it never answered is answered by the relay (not left to the client's timeout).
    const unanswered = await phone.type('tui', 'tui.rpc.response');
    expect(unanswered.payload).toMatchObject({ id: 1, error: { code: -32000, data: { code: 'tui.gateway_stopped' } } });
    const det = await phone.type('tui', 'tui.detached');
    expect(det.payload).toMatchObject({ reason: 'exited', exit_code: 3 });
    const again = await attach(phone);
    const pid2 = again.payload.pid as number;
    expect(pid2).not.toBe(pid);
    phone.close();
    await eventually(() => readEvents(relay.home).some((e) => e.type === 'tui.stopped' && e.data.pid === pid2), 5000, 'tui.stopped');
    expect(readEvents(relay.home).find((e) => e.type === 'tui.stopped' && e.data.pid === pid2)?.data).toMatchObject({ reason: 'disconnected' });
    expect((await leftoversAfter(pid2)).session).toEqual([]);
  });

  it('revoking the session stops its gateway; the phone is told tui.detached {reason: revoked} before 4403', async () => {
    const { phone, token, prefix } = await pairPhone(relay);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    await fetch(`${relay.url}/sessions/${prefix}`, { method: 'DELETE', headers: bearer(token) });
    // The socket closes before the gateway has exited: without this frame a client waited on a dead stream.
    expect(await phone.closed).toBe(4403);
    expect(phone.frames.slice(-2)).toEqual([
      expect.objectContaining({ type: 'tui.detached', payload: { reason: 'revoked', exit_code: null, signal: null } }),
      expect.objectContaining({ type: 'session.revoked', payload: { reason: 'revoked', revoked_self: true } }),
    ]);
    await eventually(() => readEvents(relay.home).some((e) => e.type === 'tui.stopped' && e.data.pid === pid), 5000, 'tui.stopped');
    expect(readEvents(relay.home).find((e) => e.type === 'tui.stopped' && e.data.pid === pid)?.data).toMatchObject({ reason: 'revoked' });
    expect((await leftoversAfter(pid)).session).toEqual([]);
  });

  it('a PATCH that drops the tui grant stops the gateway (grant_removed); dropping another grant does not', async () => {
    const { phone, token, prefix } = await pairPhone(relay);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    const patch = (grants: Record<string, unknown>) =>
      fetch(`${relay.url}/sessions/${prefix}`, {
        method: 'PATCH',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ grants }),
      });
    expect((await patch({ bridge: false })).status).toBe(200);
    await relay.loop.drain();
    expect(readEvents(relay.home).some((e) => e.type === 'tui.stopped' && e.data.pid === pid)).toBe(false);
    expect((await patch({ tui: false })).status).toBe(200);
    await eventually(() => readEvents(relay.home).some((e) => e.type === 'tui.stopped' && e.data.pid === pid), 5000, 'tui.stopped');
    expect(readEvents(relay.home).find((e) => e.type === 'tui.stopped' && e.data.pid === pid)?.data).toMatchObject({ reason: 'grant_removed' });
    phone.close();
  });

  it('a gateway flooding a slow phone is paused, and nothing is lost', async () => {
    const { phone } = await pairPhone(relay);
    await attach(phone);
    let ticks = 0;
    phone.ws.on('message', (raw) => {
      if (raw.toString().includes('"gateway.tick"')) ticks++;
    });
    const socket = (phone.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();
    phone.send('tui', 'tui.rpc.request', { id: 'f', method: 'flood', params: { count: 20000, size: 1000 } });
    const svc = relay.app.get(TuiService);
    await eventually(() => svc.running().some((t) => t.paused), 10_000, 'stdout paused');
    await new Promise((r) => setTimeout(r, 300));
    const mine = svc.running().find((t) => t.paused)!;
    expect(mine.buffered).toBeLessThan(2 * 1024 * 1024);
    socket.resume();
    await eventually(() => ticks === 20000, 15_000, 'all ticks');
    phone.frames.length = 0;
    phone.send('tui', 'tui.detach', {}, 'd');
    await phone.next((f) => f.id === 'd');
    phone.close();
  });

  it('refuses bad frames on the channel (a request with an id gets a JSON-RPC error) and needs the tui grant', async () => {
    const { phone } = await pairPhone(relay);
    phone.send('tui', 'tui.rpc.request', { id: 1, method: 'ping' }, 'early');
    expect(await phone.next((f) => f.id === 'early')).toMatchObject({
      type: 'tui.rpc.response',
      payload: { jsonrpc: '2.0', id: 1, error: { code: -32000, data: { code: 'tui.not_attached' } } },
    });
    phone.send('tui', 'tui.rpc.request', { method: 'ping' }, 'early-notification');
    expect(await phone.next((f) => f.id === 'early-notification')).toMatchObject({ type: 'tui.error', payload: { code: 'tui.not_attached' } });
    expect(await attach(phone, { profile: '../../etc' })).toMatchObject({ type: 'tui.error', payload: { code: 'tui.bad_attach' } });
    expect(await attach(phone, { cols: -1 })).toMatchObject({ type: 'tui.error', payload: { code: 'terminal.bad_size' } });
    await attach(phone);
    phone.send('tui', 'tui.rpc.request', { hello: 'world' }, 'bad');
    expect(await phone.next((f) => f.id === 'bad')).toMatchObject({ type: 'tui.error', payload: { code: 'tui.bad_request' } });
    phone.send('tui', 'tui.rpc.request', { id: 'x', hello: 'world' }, 'bad-id');
    expect(await phone.next((f) => f.id === 'bad-id')).toMatchObject({
      type: 'tui.rpc.response',
      payload: { id: 'x', error: { code: -32600, data: { code: 'tui.bad_request' } } },
    });
    phone.send('tui', 'tui.detach', {}, 'd');
    await phone.next((f) => f.id === 'd');
    phone.close();
    // Without the grant the socket stays usable: the attach is answered as unavailable, requests with the reason.
    const none = await pairPhone(relay, { terms: { grants: { tui: false } } });
    expect(await attach(none.phone)).toMatchObject({
      channel: 'tui',
      type: 'tui.attached',
      payload: { available: false, pid: null, code: 'grant_required', grant: 'tui' },
    });
    none.phone.send('tui', 'tui.rpc.request', { id: 'r1', method: 'ping' }, 'g');
    expect(await none.phone.next((f) => f.id === 'g')).toMatchObject({
      type: 'tui.rpc.response',
      payload: { id: 'r1', error: { data: { code: 'grant_required' } } },
    });
    expect(none.phone.frames.some((f) => f.type === 'tui.error' || f.channel === 'system')).toBe(false);
    none.phone.close();
  });

  it('a relay shutdown stops every gateway and records it', async () => {
    const r3 = await startRelay({ config: { terminalShell: '/bin/sh', tuiCommand: command() } });
    const { phone } = await pairPhone(r3);
    const ok = await attach(phone);
    const pid = ok.payload.pid as number;
    expect(r3.app.get(TuiService).running()).toHaveLength(1);
    await r3.close();
    expect((await leftoversAfter(pid)).session).toEqual([]);
    expect(readEvents(r3.home).find((e) => e.type === 'tui.stopped' && e.data.pid === pid)?.data).toMatchObject({ reason: 'shutdown' });
  });
});

describe('tui without a configured command', () => {
  it('no gateway found: the attach is answered as unavailable (not tui.error), requests say what to configure', async () => {
    const home = tempHome();
    const relay = await startRelay({ env: { HOME: home }, config: { terminalShell: '/bin/sh', tuiCommand: null } });
    const { phone } = await pairPhone(relay);
    const f = await attach(phone);
    expect(f).toMatchObject({ channel: 'tui', type: 'tui.attached', payload: { available: false, pid: null, code: 'tui.not_configured' } });
    expect(String(f.payload.message)).toMatch(/RELAY_TUI_COMMAND/);
    expect(String(f.payload.message)).not.toContain(home);
    phone.send('tui', 'tui.rpc.request', { jsonrpc: '2.0', id: 'r1', method: 'session.create', params: {} });
    const res = await phone.type('tui', 'tui.rpc.response');
    expect(res.payload).toMatchObject({ id: 'r1', error: { code: -32000, data: { code: 'tui.not_configured' } } });
    expect(String((res.payload.error as { message: string }).message)).toMatch(/RELAY_TUI_COMMAND/);
    phone.send('tui', 'tui.resize', { cols: 90, rows: 30 }, 'rs');
    phone.send('tui', 'tui.detach', {}, 'dt');
    expect(await phone.next((x) => x.id === 'dt')).toMatchObject({ type: 'tui.detached', payload: { reason: 'detached' } });
    expect(phone.frames.some((x) => x.type === 'tui.error' || x.id === 'rs')).toBe(false);
    phone.close();
    await relay.close();
  });

  it('a command that cannot be split is a clear error at start', async () => {
    await expect(startRelay({ config: { terminalShell: '/bin/sh', tuiCommand: "node 'unterminated" } })).rejects.toThrow(
      /RELAY_TUI_COMMAND cannot be split/,
    );
  });
});
