import * as net from 'node:net';
import WebSocket from 'ws';
import { McpSessions } from '../../apps/relay/src/mcp/mcp-sessions';
import { PhoneHub } from '../../apps/relay/src/phone-socket/phone-hub.service';
import { FakeDesktop } from '../support/desktop';
import { nextCode, pairPhone, readEvents, registerCode, startRelay, type Frame, type TestRelay } from '../support/harness';
import { call } from '../support/http';
import { initializeBody, mcpPost } from '../support/mcp';
import { sleep, until } from '../support/voice-client';

/**
 * Issue 34, finding 2: every socket is bounded both ways (apps/relay/src/common/sockets/socket-guard.ts). A peer
 * that stops reading is closed 1013 `slow_consumer` once the relay holds RELAY_SOCKET_BUFFER_MB of unsent
 * output for it; frames past RELAY_SOCKET_FRAMES_PER_SECOND are paced (reading pauses, nothing is dropped);
 * liveness is the peer answering the relay's ping, not the peer talking. The bounds are shrunk here through
 * the same environment variables an operator sets.
 */
jest.setTimeout(60_000);

const disconnects = (relay: TestRelay, prefix: string) =>
  readEvents(relay.home).filter((e) => e.type === 'phone.disconnected' && e.data.tokenPrefix === prefix);

/** The relay's side of a phone's only socket (the buffer it holds for that phone). */
const serverSide = (relay: TestRelay, prefix: string) => relay.app.get(PhoneHub).byPrefix(prefix)[0];

/** Stops reading the client's TCP socket: the relay's frames pile up in the kernel, then in the relay. */
const stopReading = (ws: WebSocket) => (ws as unknown as { _socket: { pause(): void } })._socket.pause();

describe('a phone that stops reading', () => {
  let relay: TestRelay;
  // The frame cap off: the output bound alone is under test (at the default 200 pongs a second the same attack
  // only takes longer to fill the buffer).
  beforeAll(async () => {
    relay = await startRelay({
      env: { RELAY_SOCKET_BUFFER_MB: '0.25', RELAY_SOCKET_FRAMES_PER_SECOND: '1000000', RELAY_SOCKET_FRAME_BURST: '1000000' },
    });
  });
  afterAll(() => relay.close('test done'));

  it('is closed 1013 slow_consumer once the relay holds 256 KiB of unsent pongs for it: recorded, logged, and the buffer never grew past the bound', async () => {
    const { phone, prefix, token } = await pairPhone(relay);
    stopReading(phone.ws);
    const bound = 256 * 1024;
    const id = 'p'.repeat(128); // a pong echoes the ping's id: about as many bytes out as in
    let peak = 0;
    let sent = 0;
    // The probe's attack: system/ping needs no grant. Before: the relay's buffer grew without end (RSS
    // 106 -> 710 MiB in 20 s); here 40 MB of pongs are asked for, far past the kernel's buffers.
    while (sent < 200_000 && serverSide(relay, prefix)) {
      for (let i = 0; i < 1000; i++) phone.send('system', 'ping', { ts: 1 }, id);
      sent += 1000;
      await new Promise((r) => setImmediate(r));
      peak = Math.max(peak, serverSide(relay, prefix)?.ws.bufferedAmount ?? 0);
    }
    await until(() => disconnects(relay, prefix).length === 1, 20_000, 'the disconnect record');
    expect(disconnects(relay, prefix)[0].data).toMatchObject({ code: 1013, reason: 'slow_consumer' });
    // One pong past the bound at most, and the socket is gone (its buffers with it).
    expect(peak).toBeLessThanOrEqual(bound + 1024);
    expect(relay.app.get(PhoneHub).byPrefix(prefix)).toHaveLength(0);
    const line = relay.logs.find((l) => l.includes('slow_consumer'));
    expect(line).toBeDefined();
    expect(line).not.toContain(token);
    phone.ws.terminate();
    // The relay answers everyone else meanwhile and after.
    expect((await call(relay, 'GET', '/health')).status).toBe(200);
  });

  it('a desktop client that stops reading while the agent calls its tools: closed 1013 slow_consumer, the callers get 502 desktop.client_gone, never a 500', async () => {
    const d = await FakeDesktop.pair(relay);
    d.status();
    await until(() => relay.loop.models.desktop.targets().length === 1, 10_000, 'the desktop status');
    const prefix = d.token.slice(0, 8);
    stopReading(d.phone.ws);
    const content = 'x'.repeat(1024 * 1024);
    const calls: Array<Promise<{ status: number; body: Record<string, unknown> }>> = [];
    // Each call is a desktop.command frame of 1 MiB the client never reads: 12 MiB, past the kernel's buffers.
    for (let i = 0; i < 12 && disconnects(relay, prefix).length === 0; i++) {
      calls.push(call(relay, 'POST', '/desktop/desktop_write_file', { path: `/tmp/f${i}`, content }));
      await sleep(50);
    }
    await until(() => disconnects(relay, prefix).length === 1, 20_000, 'the disconnect record');
    expect(disconnects(relay, prefix)[0].data).toMatchObject({ code: 1013, reason: 'slow_consumer' });
    const answers = await Promise.all(calls);
    expect(answers.some((a) => a.status === 502 && a.body.code === 'desktop.client_gone')).toBe(true);
    for (const a of answers) expect([502, 503]).toContain(a.status);
    d.phone.ws.terminate();
  });
});

describe('a phone that floods frames', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_SOCKET_FRAMES_PER_SECOND: '50', RELAY_SOCKET_FRAME_BURST: '20', RELAY_SOCKET_BUFFER_MB: '0.25' } });
  });
  afterAll(() => relay.close('test done'));

  it('past the per-second cap is paced, not dropped: 150 pings take about 2.6 s, every one is answered, and the socket stays open', async () => {
    const { phone } = await pairPhone(relay);
    const t0 = performance.now();
    const at: number[] = [];
    phone.ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as Frame;
      if (f.type === 'pong') at.push(performance.now() - t0);
    });
    for (let i = 0; i < 150; i++) phone.send('system', 'ping', { ts: i }, `f${i}`);
    await until(() => at.length === 150, 30_000, 'every pong');
    // The bucket holds 20 (one went on the auth frame) and refills 50 a second: the k-th answer cannot come
    // before (k - 20) / 50 s. A slower machine only answers later. Before: all 150 within a few ms.
    for (let k = 40; k <= 150; k += 10) expect(at[k - 1]).toBeGreaterThanOrEqual(((k - 20) / 50) * 1000 - 50);
    expect(phone.closeCode).toBeNull();
    phone.close();
  });

  it('reading pauses while its frames wait: the flooder’s own buffer fills (back-pressure reaches the sender), not the relay', async () => {
    const { phone, prefix } = await pairPhone(relay);
    const pad = 'x'.repeat(32 * 1024);
    for (let i = 0; i < 600; i++) phone.send('system', 'ping', { ts: i, pad }, `b${i}`);
    // 19 MiB of frames at 50 a second: the relay reads a queue's worth (256 KiB) and the kernel's buffers, then
    // stops reading. Before: it read all of it within a second (its queue held whatever came).
    await sleep(1500);
    expect(phone.ws.bufferedAmount).toBeGreaterThan(4 * 1024 * 1024);
    expect(serverSide(relay, prefix)).toBeDefined();
    phone.ws.terminate();
  });
});

describe('liveness is the peer answering the relay’s ping', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ config: { pingIntervalMs: 200 } });
  });
  afterAll(() => relay.close('test done'));

  it('a peer that keeps talking but never answers a ping is dropped at the ping deadline (1008 ping_timeout, recorded); a quiet phone that answers stays', async () => {
    const quiet = await pairPhone(relay);
    const code = nextCode();
    expect((await registerCode(relay, code)).status).toBe(200);
    const talker = new WebSocket(relay.url.replace('http', 'ws') + '/ws', { autoPong: false });
    await new Promise((r) => talker.once('open', r));
    const frames: Frame[] = [];
    talker.on('message', (d) => frames.push(JSON.parse(String(d)) as Frame));
    const closed = new Promise<number>((r) => talker.once('close', r));
    talker.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_id: 'talker' } }));
    await until(() => frames.some((f) => f.type === 'auth.ok'), 10_000, 'auth.ok');
    const prefix = String(frames.find((f) => f.type === 'auth.ok')!.payload.token_prefix);
    // Talks every 50 ms, four times per ping interval. Before: any frame counted as alive, so it stayed forever.
    const chatter = setInterval(
      () => talker.readyState === talker.OPEN && talker.send(JSON.stringify({ channel: 'system', type: 'ping', payload: {} })),
      50,
    );
    const t0 = Date.now();
    try {
      await until(() => disconnects(relay, prefix).length === 1, 5_000, 'the ping deadline');
    } finally {
      clearInterval(chatter);
    }
    // A ping goes out at a tick and is due by the next: dropped within two intervals of the first tick.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(disconnects(relay, prefix)[0].data).toMatchObject({ code: 1008, reason: 'ping_timeout' });
    await closed;
    // The quiet phone sent nothing all along and answered every ping (as OkHttp does): still here.
    quiet.phone.send('system', 'ping', {}, 'still');
    expect((await quiet.phone.next((f) => f.id === 'still')).type).toBe('pong');
    expect(disconnects(relay, quiet.prefix)).toHaveLength(0);
    quiet.phone.close();
  });
});

describe('an MCP client (Streamable HTTP, event-stream answers) that stops reading', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close('test done'));

  // No fix here, a guard against one: the relay writes on /mcp only in answer to a request (a GET stream gets
  // nothing pushed), and Node stops reading a connection's pipelined requests while its answers are unsent.
  it('20,000 pipelined tools/list on one connection it never reads: a few hundred are answered, the rest wait in the client', async () => {
    const { token } = await pairPhone(relay);
    const init = await mcpPost(relay, initializeBody(1, { elicitation: { form: {} } }), { authorization: `Bearer ${token}` });
    expect(init.headers.get('content-type')).toContain('text/event-stream');
    const sessionId = init.headers.get('mcp-session-id')!;
    const sessions = relay.app.get(McpSessions);
    const serve = sessions.serve.bind(sessions);
    let served = 0;
    sessions.serve = (s, holds, run) => (served++, serve(s, holds, run));
    const port = Number(new URL(relay.url).port);
    const sock = net.connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.pause();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const request =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nMcp-Session-Id: ${sessionId}\r\n` +
      `Mcp-Protocol-Version: 2025-11-25\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    for (let i = 0; i < 20_000; i++) sock.write(request);
    await sleep(2000);
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThan(2000);
    expect(sock.writableLength).toBeGreaterThan(1024 * 1024);
    expect((await call(relay, 'GET', '/health')).status).toBe(200);
    sock.destroy();
    sessions.serve = serve;
  });
});
