import { createHash, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import pino from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import type { RelayConfig } from '../../apps/relay/src/common/config/relay-config';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { decodeHostFrame, encodeHostFrame, FLAG_DATA, newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { startRelay, tempHome, type Frame, type TestRelay } from './harness';
import { call } from './http';

/**
 * Reach from the outside, as the two real clients speak it (the app's HermesReachTransport.kt, the desktop's
 * BrokerRelaySocket.ts): a phone's stream through a broker, Secure Link's pinned TLS inside, the relay's
 * socket inside that. Used by the suites that attack or exercise Reach end to end.
 */

/** A home whose relay runs Secure Link on loopback and Reach to `brokerPort` (its host id written beforehand). */
export function reachHome(home: string, brokerPort: number): { env: NodeJS.ProcessEnv; hostId: string; hostToken: string } {
  const hostId = newId();
  const hostToken = newToken();
  fs.mkdirSync(path.join(home, 'relay', 'secure-link'), { recursive: true });
  fs.writeFileSync(path.join(home, 'relay', 'secure-link', 'host-id'), `${hostId}\n`);
  return {
    hostId,
    hostToken,
    env: {
      RELAY_SECURE_LINK_ENABLED: '1',
      RELAY_SECURE_LINK_HOST: '127.0.0.1',
      RELAY_SECURE_LINK_PORT: '0',
      RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
      RELAY_SECURE_LINK_BROKER_URL: `ws://127.0.0.1:${brokerPort}`,
      RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
    },
  };
}

/**
 * A broker written for a test: it takes the relay's registration, acknowledges what a broker acknowledges and
 * opens streams when told; `stopReading()` stops reading the relay's socket (its TCP window closes, as a
 * hostile or wedged broker's does), so whatever the relay sends it has to hold.
 */
export async function hostileBroker() {
  const hosts: WebSocket[] = [];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 2 * 1024 * 1024 });
  wss.on('connection', (ws) => {
    ws.on('error', () => undefined);
    ws.once('message', () => {
      hosts.push(ws);
      ws.send(JSON.stringify({ type: 'registered', protocol_version: 1 }));
      ws.on('message', (d, isBinary) => {
        if (isBinary) return;
        const m = JSON.parse(String(d)) as Record<string, string>;
        if (m.type === 'publish_route') ws.send(JSON.stringify({ type: 'published', credential_kind: 'route', credential_id: m.credential_id }));
        if (m.type === 'publish_bootstrap') ws.send(JSON.stringify({ type: 'published', credential_kind: 'bootstrap', pairing_id: m.pairing_id }));
        if (m.type === 'revoke') ws.send(JSON.stringify({ type: 'revoked', credential_kind: 'route', credential_id: m.credential_id }));
      });
    });
  });
  await new Promise((r) => wss.once('listening', r));
  const port = (wss.address() as { port: number }).port;
  return {
    port,
    hosts,
    stopReading: (ws: WebSocket) => (ws as unknown as { _socket: { pause(): void } })._socket.pause(),
    close: () => new Promise<void>((r) => (wss.clients.forEach((c) => c.terminate()), wss.close(() => r()))),
  };
}

/** A stream the test's broker opens on the relay's host socket: the phone's raw bytes, framed as a broker frames them. */
export function streamOn(host: WebSocket): { duplex: Duplex; closedByRelay: () => boolean } {
  const sid = newId();
  let closed = false;
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      // A client frame is at most 1 MiB (protocol.ts MAX_FRAME); TLS hands over more at once.
      for (let i = 0; i < chunk.length; i += 256 * 1024)
        if (host.readyState === host.OPEN) host.send(encodeHostFrame(FLAG_DATA, sid, chunk.subarray(i, i + 256 * 1024)), { binary: true });
      cb();
    },
  });
  host.on('message', (d: Buffer, isBinary) => {
    const f = isBinary ? decodeHostFrame(d) : null;
    if (f?.streamId !== sid) return;
    if (f.flags !== FLAG_DATA) closed = true;
    duplex.push(f.flags === FLAG_DATA ? f.payload : null);
  });
  host.send(JSON.stringify({ type: 'open', protocol_version: 1, stream_id: sid, host_connection_id: newId() }));
  return { duplex, closedByRelay: () => closed };
}

/** A phone's side of the project's broker: registered with a credential, then raw bytes (or the broker's refusal code). */
export async function brokerStream(
  brokerUrl: string,
  hostId: string,
  kind: 'bootstrap' | 'route',
  token: string,
): Promise<{ ws: WebSocket; duplex: Duplex; closed: Promise<number> } | { error: string }> {
  const ws = new WebSocket(brokerUrl, { perMessageDeflate: false });
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  ws.send(
    JSON.stringify({ type: 'register', protocol_version: 1, role: 'client', host_id: hostId, connection_id: newId(), credential_kind: kind, token }),
  );
  const first = await new Promise<{ type: string; code?: string }>((r) => ws.once('message', (d) => r(JSON.parse(String(d)))));
  if (first.type !== 'matched') return { error: first.code ?? first.type };
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      for (let i = 0; i < chunk.length; i += 256 * 1024) ws.send(chunk.subarray(i, i + 256 * 1024), { binary: true });
      cb();
    },
  });
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  ws.on('message', (d: Buffer, isBinary) => isBinary && duplex.push(d));
  ws.on('close', () => duplex.push(null));
  return { ws, duplex, closed };
}

/** The pinned Secure Link identity a QR's candidate carries (`proxy.pin_sha256`, `proxy.cert_der`). */
export type Pinned = { pin_sha256: string; cert_der: string };

/**
 * A socket to `path` on the relay through `duplex`: Secure Link's TLS, the pin checked as the app checks it
 * (without a pin, any certificate: a test that opened its own stream), then the WebSocket upgrade.
 */
export async function socketThrough(
  duplex: Duplex,
  pathname: string,
  pinned?: Pinned,
  headers: Record<string, string> = {},
  made?: (ws: WebSocket) => void,
): Promise<WebSocket> {
  const ca = pinned ? `-----BEGIN CERTIFICATE-----\n${pinned.cert_der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n` : undefined;
  const secure = tls.connect({
    socket: duplex,
    servername: '127.0.0.1',
    ...(pinned
      ? {
          ca,
          checkServerIdentity: (host: string, cert: tls.PeerCertificate) => {
            const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
            const pin = `sha256/${createHash('sha256').update(spki).digest('base64')}`;
            return pin === pinned.pin_sha256 ? tls.checkServerIdentity(host, cert) : new Error('pin mismatch');
          },
        }
      : { rejectUnauthorized: false }),
  });
  const ws = new WebSocket(`wss://127.0.0.1${pathname}`, { createConnection: () => secure, headers });
  ws.on('error', () => undefined);
  // A frame the server sends at once can come with the 101, before a caller awaiting this could listen.
  made?.(ws);
  await new Promise((r, j) => (ws.once('open', r), ws.once('unexpected-response', (_q, res) => j(new Error(`upgrade refused: ${res.statusCode}`)))));
  return ws;
}

/** A phone socket through a stream: frames kept, the close it saw, `auth` as the app sends it. */
export class TunnelPhone {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => this.frames.push(JSON.parse(String(d)) as Frame));
    this.closed = new Promise((r) => ws.on('close', (code, reason) => r({ code, reason: String(reason) })));
  }

  static async open(duplex: Duplex, pinned?: Pinned, pathname = '/relay/ws', headers: Record<string, string> = {}): Promise<TunnelPhone> {
    let phone: TunnelPhone | null = null;
    await socketThrough(duplex, pathname, pinned, headers, (ws) => (phone = new TunnelPhone(ws)));
    return phone!;
  }

  send(channel: string, type: string, payload: Record<string, unknown> = {}, id?: string): void {
    this.ws.send(JSON.stringify({ channel, type, id, payload }));
  }

  async auth(payload: Record<string, unknown>, timeoutMs = 15_000): Promise<Frame> {
    this.send('system', 'auth', payload, 'auth-1');
    return this.next((f) => f.channel === 'system' && (f.type === 'auth.ok' || f.type === 'auth.fail'), timeoutMs, 'auth.ok or auth.fail');
  }

  async next(match: (f: Frame) => boolean, timeoutMs = 15_000, what = 'a frame'): Promise<Frame> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.find(match);
      if (f) return f;
      if (Date.now() > end) throw new Error(`no ${what} within ${timeoutMs} ms; got ${JSON.stringify(this.frames.map((x) => x.type))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** The QR's Reach candidate (`/pairing/mint` with Reach connected): the broker's bootstrap credential and the pinned proxy. */
export type BrokerCandidate = {
  broker: { url: string; host_id: string; token: string; expires_at: number };
  proxy: Pinned;
};

/** A phone on the project's broker with a credential: its stream, its socket at /relay/ws inside. */
export async function phoneViaBroker(cand: BrokerCandidate, kind: 'bootstrap' | 'route', token: string) {
  const stream = await brokerStream(cand.broker.url, cand.broker.host_id, kind, token);
  if ('error' in stream) throw new Error(`the broker refused the ${kind} credential: ${stream.error}`);
  return { stream, phone: await TunnelPhone.open(stream.duplex, cand.proxy) };
}

/**
 * The project's broker (`svc reach`, in this process) and a relay connected to it. The relay's clock is a
 * manual one started at the wall clock's now: the broker checks expiries on the wall clock. The broker keeps
 * its published credentials in a state file, so a test waits on what it holds (`routeAtBroker`).
 */
export async function reachRelay(
  opts: { env?: NodeJS.ProcessEnv; config?: Partial<RelayConfig> } = {},
): Promise<{ relay: TestRelay; broker: ReachBroker; routeAtBroker: (credentialId: string) => boolean; close: () => Promise<void> }> {
  const dir = tempHome();
  const credentials = path.join(dir, 'credentials.json');
  const stateFile = path.join(dir, 'state.json');
  fs.writeFileSync(credentials, JSON.stringify({ hosts: {} }));
  const broker = new ReachBroker({ credentialsFile: credentials, stateFile, listen: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
  await broker.start();
  // The relay's environment needs the broker's port, and the broker the relay's host id: the credentials go in after.
  const home = tempHome();
  const reach = reachHome(home, broker.port);
  fs.writeFileSync(credentials, JSON.stringify({ hosts: { [reach.hostId]: { host_token_sha256: tokenSha256(reach.hostToken) } } }));
  broker.reloadCredentials();
  const relay = await startRelay({
    home,
    env: { ...reach.env, ...opts.env },
    config: opts.config,
    reachBackoff: { baseMs: 50, maxMs: 200 },
    clock: new ManualClock(new Date().toISOString()),
  });
  const end = Date.now() + 20_000;
  while (broker.stats().hosts_online !== 1) {
    if (Date.now() > end) throw new Error('the relay did not come online at the broker');
    await new Promise((r) => setTimeout(r, 20));
  }
  const routeAtBroker = (credentialId: string) => {
    if (!fs.existsSync(stateFile)) return false;
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { credentials: Array<{ kind: string; credential_id: string }> };
    return state.credentials.some((c) => c.kind === 'route' && c.credential_id === credentialId);
  };
  return {
    relay,
    broker,
    routeAtBroker,
    close: async () => {
      await relay.close();
      await broker.close();
    },
  };
}

/** Pairs a phone through the broker with a QR's bootstrap credential; its auth.ok payload and the QR's candidate (the pairing socket closed). */
export async function pairThroughBroker(relay: TestRelay, deviceId: string, terms: Record<string, unknown> = {}) {
  const mint = await call(relay, 'POST', '/pairing/mint', terms);
  if (mint.status !== 200) throw new Error(`mint: ${mint.status} ${JSON.stringify(mint.body)}`);
  const qr = JSON.parse(mint.body.qr_payload as string) as { relay: { code: string }; endpoints: Array<{ role: string }> };
  const cand = qr.endpoints.find((e) => e.role === 'outbound_broker') as unknown as BrokerCandidate;
  const first = await phoneViaBroker(cand, 'bootstrap', cand.broker.token);
  const ok = await first.phone.auth({ pairing_code: qr.relay.code, device_id: deviceId, device_name: 'Far away' });
  if (ok.type !== 'auth.ok') throw new Error(`pairing through the broker: ${JSON.stringify(ok)}`);
  first.phone.ws.close();
  await first.stream.closed;
  return { cand, ok: ok.payload as Record<string, any> };
}
