import { spawn } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duplex, Writable } from 'node:stream';
import * as tls from 'node:tls';
import { WebSocket } from 'ws';
import pino from 'pino';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import type { BrokerOptions } from '../../apps/relay/src/reach/broker-options';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';

/** What a registration at the broker came to: a matched stream, the broker's error code, or an HTTP refusal of the upgrade. */
export type ReachOutcome =
  | { matched: true; ws: WebSocket; duplex: Duplex; streamId: string }
  | { matched: false; code: string }
  | { matched: false; status: number; retryAfter: string | undefined; body: Record<string, unknown> };

export type Registration = {
  role?: 'host' | 'client';
  hostId: string;
  kind: 'host' | 'bootstrap' | 'route';
  token: string;
  connectionId?: string;
  /** The source address (any 127.x.y.z on Linux, or an address of the namespace the test made). */
  from?: string;
  /** A `wss://` broker's certificate, when it is its own. */
  ca?: string;
};

/**
 * A registration as the phone app (HermesReachTransport.kt) and the desktop (BrokerRelaySocket.ts) send it:
 * the WebSocket, the register frame, then the broker's first answer. A matched stream carries raw bytes.
 */
export async function reachRegister(url: string, r: Registration): Promise<ReachOutcome> {
  const ws = new WebSocket(url, { perMessageDeflate: false, ...(r.from ? { localAddress: r.from } : {}), ...(r.ca ? { ca: r.ca } : {}) });
  const opened = await new Promise<ReachOutcome | null>((resolve, reject) => {
    ws.once('open', () => resolve(null));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ matched: false, status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: JSON.parse(text || '{}') }),
      );
    });
    ws.once('error', reject);
  });
  if (opened) return opened;
  ws.send(
    JSON.stringify({
      type: 'register',
      protocol_version: 1,
      role: r.role ?? 'client',
      host_id: r.hostId,
      connection_id: r.connectionId ?? newId(),
      credential_kind: r.kind,
      token: r.token,
    }),
  );
  const first = await new Promise<{ type: string; code?: string; stream_id?: string }>((resolve) =>
    ws.once('message', (d) => resolve(JSON.parse(String(d)))),
  );
  if (first.type !== 'matched' && first.type !== 'registered') return { matched: false, code: first.code ?? first.type };
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      ws.send(chunk, { binary: true }, cb);
    },
    final(cb) {
      ws.close();
      cb();
    },
  });
  ws.on('message', (d: Buffer, isBinary) => isBinary && duplex.push(d));
  ws.on('close', () => duplex.push(null));
  return { matched: true, ws, duplex, streamId: first.stream_id ?? '' };
}

/**
 * A phone's side of Reach (the app's HermesReachTransport, the desktop's BrokerRelaySocket): register
 * with a credential, then raw bytes both ways, as a Duplex a TLS client can run over. `ca`: a `wss://`
 * broker's certificate, when it is its own.
 */
export async function reachClientStream(
  brokerUrl: string,
  hostId: string,
  kind: 'bootstrap' | 'route',
  token: string,
  opts: { ca?: string } = {},
): Promise<{ ws: WebSocket; duplex: Duplex } | { error: string }> {
  const r = await reachRegister(brokerUrl, { hostId, kind, token, ca: opts.ca });
  if (r.matched) return { ws: r.ws, duplex: r.duplex };
  return { error: 'code' in r ? r.code : `HTTP ${r.status}` };
}

/** Secure Link's TLS over a Reach stream, the QR's pin checked (the app's PluginProxyTransport does the same). */
export async function pinnedTls(duplex: Duplex, proxy: { pin_sha256: string; cert_der: string }): Promise<tls.TLSSocket> {
  const socket = tls.connect({
    socket: duplex,
    servername: '127.0.0.1',
    ca: `-----BEGIN CERTIFICATE-----\n${proxy.cert_der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
    checkServerIdentity: (host, cert) => {
      const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
      const pin = `sha256/${createHash('sha256').update(spki).digest('base64')}`;
      return pin === proxy.pin_sha256 ? tls.checkServerIdentity(host, cert) : new Error('pin mismatch');
    },
  });
  await new Promise((r, j) => (socket.once('secureConnect', r), socket.once('error', j)));
  return socket;
}

/** A host on the broker as a relay's connector is one: registered, publishing route credentials on request. */
export async function fakeHost(url: string, hostId: string, hostToken: string) {
  const reg = await reachRegister(url, { role: 'host', hostId, kind: 'host', token: hostToken });
  if (!reg.matched) throw new Error(`host not registered: ${JSON.stringify(reg)}`);
  const frames: Array<Record<string, unknown>> = [];
  reg.ws.on('message', (d, isBinary) => !isBinary && frames.push(JSON.parse(String(d))));
  return {
    ws: reg.ws,
    frames,
    /** `expiresAt`: epoch seconds (an hour from now by default). */
    async publishRoute(credentialId: string, token: string, expiresAt = Math.floor(Date.now() / 1000) + 3600): Promise<void> {
      const before = frames.length;
      reg.ws.send(
        JSON.stringify({
          type: 'publish_route',
          protocol_version: 1,
          credential_id: credentialId,
          token_sha256: tokenSha256(token),
          expires_at: expiresAt,
          device_id_hash: 'd',
        }),
      );
      const end = Date.now() + 5000;
      while (!frames.slice(before).some((f) => f.type === 'published' && f.credential_id === credentialId)) {
        if (Date.now() > end) throw new Error('route credential not published');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/**
 * A broker (`svc reach`'s class, on an ephemeral loopback port) with one host online and one route
 * credential published, its log kept. The manual clock starts now: its minutes and days move only when a
 * test moves them.
 */
export async function brokerWithHost(limits: BrokerOptions['limits'] = {}, opts: { routeDays?: number } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-reach-broker-'));
  const hostId = newId();
  const hostToken = newToken();
  const credentials = path.join(dir, 'credentials.json');
  fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, new Writable({ write: (c, _e, cb) => (logs.push(String(c)), cb()) }));
  const clock = new ManualClock(new Date().toISOString());
  const broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, logger, limits, clock });
  await broker.start();
  const host = await fakeHost(broker.url, hostId, hostToken);
  const route = newToken();
  await host.publishRoute('route-1', route, Math.floor(Date.now() / 1000) + (opts.routeDays ?? 1 / 24) * 86_400);
  return { broker, clock, hostId, hostToken, host, route, logs, credentials };
}

/** What a registration came to, in one word: `matched`, the broker's error code, or the HTTP status. */
export const outcome = (o: ReachOutcome): string | number => (o.matched ? 'matched' : 'code' in o ? o.code : o.status);

/** Ends a matched stream and waits until its socket is closed. */
export async function closeStream(o: ReachOutcome): Promise<void> {
  if (!o.matched || o.ws.readyState === WebSocket.CLOSED) return;
  const closed = new Promise((r) => o.ws.once('close', r));
  o.ws.terminate();
  await closed;
}

export type BogusResult = { from: string; result: string | number };

/**
 * The hostile client (test/fixtures/reach/bogus-registrations.mjs) in a child process: one registration
 * with a made-up route credential from each address in `from`; `netns`: run it in that network namespace.
 */
export async function bogusRegistrations(
  c: { url: string; hostId: string; from: string[]; concurrency?: number },
  netns?: string,
): Promise<BogusResult[]> {
  const script = path.join(__dirname, '..', 'fixtures', 'reach', 'bogus-registrations.mjs');
  const [cmd, args] = netns ? ['ip', ['netns', 'exec', netns, process.execPath, script]] : [process.execPath, [script]];
  const child = spawn(cmd, args, { env: { ...process.env, SOURCES_CONFIG: JSON.stringify(c) } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const status = await new Promise<number | null>((resolve) => {
    const t = setTimeout(() => child.kill(), 120_000);
    child.on('exit', (code) => (clearTimeout(t), resolve(code)));
  });
  if (status !== 0 || err) throw new Error(`bogus-registrations exited ${status}: ${err}`);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as BogusResult);
}
