import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duplex, Writable } from 'node:stream';
import * as tls from 'node:tls';
import pino from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { ReachConnector } from '../../apps/relay/src/reach/connector';
import { decodeHostFrame, encodeHostFrame, FLAG_DATA, newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { nextCode, readEvents, registerCode, startRelay, tempHome, type Frame, type TestRelay } from '../support/harness';
import { until } from '../support/voice-client';

/**
 * Issue 34, finding 2, on Reach: the relay's socket to its broker and the broker's own sockets keep the
 * socket guard's keepalive, and the relay holds a bounded amount for a broker that stops reading (its
 * streams' writes wait, so the bytes stay behind TLS, in the phone socket the guard bounds).
 */
jest.setTimeout(60_000);

const stopReading = (ws: WebSocket) => (ws as unknown as { _socket: { pause(): void } })._socket.pause();

/** A broker that takes the relay's registration and does nothing else unless told (the reference protocol, reach/protocol.ts). */
async function fakeBroker(opts: { autoPong: boolean }) {
  const registrations: WebSocket[] = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: opts.autoPong, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.once('message', () => {
      registrations.push(ws);
      ws.send(JSON.stringify({ type: 'registered', protocol_version: 1 }));
      // The route credential a Reach phone's auth.ok carries is published first: acknowledged, as a broker does.
      ws.on('message', (d, isBinary) => {
        const m = isBinary ? null : (JSON.parse(String(d)) as Record<string, string>);
        if (m?.type === 'publish_route') ws.send(JSON.stringify({ type: 'published', credential_kind: 'route', credential_id: m.credential_id }));
      });
    });
    ws.on('error', () => undefined);
  });
  await new Promise((r) => wss.once('listening', r));
  const port = (wss.address() as { port: number }).port;
  return { wss, port, registrations, close: () => new Promise((r) => (wss.clients.forEach((c) => c.terminate()), wss.close(r))) };
}

async function relayOn(brokerPort: number, opts: { env?: NodeJS.ProcessEnv; pingIntervalMs?: number } = {}): Promise<TestRelay> {
  const home = tempHome();
  fs.mkdirSync(path.join(home, 'relay', 'secure-link'), { recursive: true });
  fs.writeFileSync(path.join(home, 'relay', 'secure-link', 'host-id'), `${newId()}\n`);
  return startRelay({
    home,
    env: {
      RELAY_SECURE_LINK_ENABLED: '1',
      RELAY_SECURE_LINK_HOST: '127.0.0.1',
      RELAY_SECURE_LINK_PORT: '0',
      RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
      RELAY_SECURE_LINK_BROKER_URL: `ws://127.0.0.1:${brokerPort}`,
      RELAY_SECURE_LINK_BROKER_HOST_TOKEN: newToken(),
      ...opts.env,
    },
    config: opts.pingIntervalMs ? { pingIntervalMs: opts.pingIntervalMs } : {},
    reachBackoff: { baseMs: 50, maxMs: 200 },
    clock: new ManualClock(new Date().toISOString()),
  });
}

/** A phone through the broker: a stream opened as a broker opens one, Secure Link's TLS inside, the phone socket, paired. */
async function phoneThrough(relay: TestRelay, host: WebSocket) {
  const sid = newId();
  const state = { closedByRelay: false };
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      // A client frame is at most 1 MiB (protocol.ts MAX_FRAME); TLS hands over more at once.
      for (let i = 0; i < chunk.length; i += 256 * 1024)
        host.send(encodeHostFrame(FLAG_DATA, sid, chunk.subarray(i, i + 256 * 1024)), { binary: true });
      cb();
    },
  });
  host.on('message', (d: Buffer, isBinary) => {
    const f = isBinary ? decodeHostFrame(d) : null;
    if (f?.streamId !== sid) return;
    if (f.flags !== FLAG_DATA) state.closedByRelay = true;
    duplex.push(f.flags === FLAG_DATA ? f.payload : null);
  });
  host.send(JSON.stringify({ type: 'open', protocol_version: 1, stream_id: sid, host_connection_id: newId() }));
  const secure = tls.connect({ socket: duplex, servername: '127.0.0.1', rejectUnauthorized: false });
  const phone = new WebSocket('wss://127.0.0.1/relay/ws', { createConnection: () => secure });
  const frames: Frame[] = [];
  phone.on('message', (d) => frames.push(JSON.parse(String(d)) as Frame));
  phone.on('error', () => undefined);
  await new Promise((r) => phone.once('open', r));
  const code = nextCode();
  expect((await registerCode(relay, code)).status).toBe(200);
  phone.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_id: `reach-${code}` } }));
  await until(() => frames.some((f) => f.type === 'auth.ok'), 10_000, 'auth.ok through the broker');
  return { phone, state, prefix: String(frames.find((f) => f.type === 'auth.ok')!.payload.token_prefix) };
}

describe('the relay’s socket to its Reach broker', () => {
  it('a broker that never answers a ping is dropped at the deadline (recorded as lost, ping_timeout) and connected to again', async () => {
    const broker = await fakeBroker({ autoPong: false });
    const relay = await relayOn(broker.port, { pingIntervalMs: 200 });
    try {
      // Before: the relay pinged nothing and held a dead broker connection until TCP gave up (hours).
      await until(() => broker.registrations.length >= 2, 10_000, 'a second registration');
      const lost = readEvents(relay.home).find((e) => e.type === 'secure_link.reach_changed' && e.data.state === 'lost');
      expect(String(lost?.data.error)).toContain('ping_timeout');
    } finally {
      await relay.close();
      await broker.close();
    }
  });

  it('a broker that stops reading: a stream’s writes wait (half the bound, then a quarter), so the relay’s socket to it stays bounded', async () => {
    const broker = await fakeBroker({ autoPong: true });
    const bound = 1024 * 1024;
    let accepted = 0;
    let streams = 0;
    const connector = new ReachConnector({
      brokerUrl: `ws://127.0.0.1:${broker.port}`,
      hostToken: newToken(),
      hostId: newId(),
      logger: pino({ level: 'silent' }),
      limits: { bufferBytes: bound, queuedFrames: 64, framesPerSecond: 200, frameBurst: 2000, pingIntervalMs: 30_000 },
      // What the Secure Link origin does with a stream: write into it as fast as the stream takes it (a download).
      accept: (stream) => {
        streams++;
        const chunk = Buffer.alloc(64 * 1024, 7);
        const pump = () => {
          while (!stream.destroyed && accepted < 64 * 1024 * 1024) {
            accepted += chunk.length;
            if (!stream.write(chunk)) return void stream.once('drain', pump);
          }
        };
        pump();
      },
    });
    connector.start();
    try {
      await until(() => broker.registrations.length === 1 && connector.connected, 10_000, 'the registration');
      const host = broker.registrations[0];
      stopReading(host);
      host.send(JSON.stringify({ type: 'open', protocol_version: 1, stream_id: newId(), host_connection_id: newId() }));
      await until(() => streams === 1, 10_000, 'the stream');
      const held = () => (connector as unknown as { ws: WebSocket | null }).ws?.bufferedAmount ?? 0;
      let peak = 0;
      const end = Date.now() + 2000;
      while (Date.now() < end) {
        peak = Math.max(peak, held());
        await new Promise((r) => setTimeout(r, 20));
      }
      // Before: the stream took all 64 MiB at once and the relay held them for the broker.
      expect(peak).toBeLessThanOrEqual(bound / 2 + 256 * 1024 + 64 * 1024);
      expect(accepted).toBeLessThan(32 * 1024 * 1024);
    } finally {
      connector.stop();
      await broker.close();
    }
  });

  it('a phone over Reach whose broker stops reading is closed 1013 slow_consumer (recorded), as a direct one is', async () => {
    const broker = await fakeBroker({ autoPong: true });
    const relay = await relayOn(broker.port, {
      env: { RELAY_SOCKET_BUFFER_MB: '0.25', RELAY_SOCKET_FRAMES_PER_SECOND: '1000000', RELAY_SOCKET_FRAME_BURST: '1000000' },
    });
    try {
      await until(() => broker.registrations.length === 1, 10_000, 'the registration');
      const host = broker.registrations[0];
      const { phone, prefix } = await phoneThrough(relay, host);
      const disconnected = () => readEvents(relay.home).filter((e) => e.type === 'phone.disconnected' && e.data.tokenPrefix === prefix);
      stopReading(host);
      const id = 'p'.repeat(128);
      // Before: every pong went into the relay's socket to the broker, unbounded (the stream's writes never waited).
      for (let sent = 0; sent < 200_000 && disconnected().length === 0; sent += 1000) {
        for (let i = 0; i < 1000; i++) phone.send(JSON.stringify({ channel: 'system', type: 'ping', id, payload: {} }));
        await new Promise((r) => setTimeout(r, 5));
      }
      await until(() => disconnected().length === 1, 20_000, 'the phone’s disconnect record');
      expect(disconnected()[0].data).toMatchObject({ code: 1013, reason: 'slow_consumer' });
      phone.terminate();
    } finally {
      await relay.close();
      await broker.close();
    }
  });

  it('a phone over Reach flooding past the frame cap: its stream alone ends once the relay holds the bound of it unread, the broker connection stays', async () => {
    const broker = await fakeBroker({ autoPong: true });
    const relay = await relayOn(broker.port, {
      env: { RELAY_SOCKET_BUFFER_MB: '0.25', RELAY_SOCKET_FRAMES_PER_SECOND: '20', RELAY_SOCKET_FRAME_BURST: '10' },
    });
    try {
      await until(() => broker.registrations.length === 1, 10_000, 'the registration');
      const { phone, state } = await phoneThrough(relay, broker.registrations[0]);
      const pad = 'x'.repeat(16 * 1024);
      // The phone socket is paced (20 a second) and stops reading; TLS stops reading its stream; the broker socket,
      // shared by every phone, cannot stop. Before: the stream took all 3 MiB into the relay's memory.
      for (let i = 0; i < 200; i++) phone.send(JSON.stringify({ channel: 'system', type: 'ping', id: `r${i}`, payload: { pad } }));
      await until(() => state.closedByRelay, 15_000, 'the stream closed by the relay');
      expect(relay.logs.some((l) => l.includes('reach stream closed'))).toBe(true);
      expect(broker.registrations).toHaveLength(1);
      expect(broker.registrations[0].readyState).toBe(WebSocket.OPEN);
      phone.terminate();
    } finally {
      await relay.close();
      await broker.close();
    }
  });
});

describe('the Reach broker (svc reach)', () => {
  it('drops a host that never answers its ping (1008), and the host id is free again at once', async () => {
    const dir = tempHome();
    const hostId = newId();
    const token = newToken();
    const credentials = path.join(dir, 'credentials.json');
    fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(token) } } }));
    const logs: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }));
    const broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, logger, limits: { pingIntervalMs: 200 } });
    await broker.start();
    const register = async (autoPong: boolean) => {
      const ws = new WebSocket(broker.url, { autoPong, perMessageDeflate: false });
      await new Promise((r) => ws.once('open', r));
      const registration = {
        type: 'register',
        protocol_version: 1,
        role: 'host',
        host_id: hostId,
        connection_id: newId(),
        credential_kind: 'host',
        token,
      };
      ws.send(JSON.stringify(registration));
      const first = await new Promise<{ type: string; code?: string }>((r) => ws.once('message', (d) => r(JSON.parse(String(d)))));
      return { ws, first };
    };
    try {
      const dead = await register(false);
      expect(dead.first.type).toBe('registered');
      const closed = new Promise<number>((r) => dead.ws.once('close', r));
      // Before: the broker pinged nothing; a host gone without a FIN kept its id busy (host_busy) until TCP gave up.
      expect(await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open'), 5000))])).toBe(1008);
      await until(() => broker.stats().hosts_online === 0, 5000, 'the host dropped');
      expect(logs.some((l) => l.includes('ping_timeout'))).toBe(true);
      expect(logs.join('')).not.toContain(token);
      const back = await register(true);
      expect(back.first.type).toBe('registered');
      back.ws.close();
    } finally {
      await broker.close();
    }
  });
});
