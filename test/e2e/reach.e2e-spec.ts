import { createHash, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duplex, Writable } from 'node:stream';
import * as tls from 'node:tls';
import pino from 'pino';
import { WebSocket } from 'ws';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { BrokerConfigError } from '../../apps/relay/src/reach/broker-credentials';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';

const until = async (what: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** A phone's side of Reach (the app's HermesReachTransport, the desktop's BrokerRelaySocket): register, then raw bytes. */
async function clientStream(
  brokerUrl: string,
  hostId: string,
  kind: 'bootstrap' | 'route',
  token: string,
): Promise<{ ws: WebSocket; duplex: Duplex } | { error: string }> {
  const ws = new WebSocket(brokerUrl, { perMessageDeflate: false });
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  ws.send(
    JSON.stringify({ type: 'register', protocol_version: 1, role: 'client', host_id: hostId, connection_id: newId(), credential_kind: kind, token }),
  );
  const first = await new Promise<{ type: string; code?: string }>((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
  if (first.type !== 'matched') return { error: first.code ?? first.type };
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      ws.send(chunk, { binary: true }, cb);
    },
  });
  ws.on('message', (d: Buffer, isBinary) => isBinary && duplex.push(d));
  ws.on('close', () => duplex.push(null));
  return { ws, duplex };
}

/** Secure Link's TLS over that stream, pinned, then the phone socket at /relay/ws, then system/auth. */
async function authThrough(
  duplex: Duplex,
  proxy: { pin_sha256: string; cert_der: string },
  payload: Record<string, unknown>,
): Promise<Record<string, any>> {
  const ca = `-----BEGIN CERTIFICATE-----\n${proxy.cert_der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  const socket = tls.connect({
    socket: duplex,
    servername: '127.0.0.1',
    ca,
    checkServerIdentity: (host, cert) => {
      const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
      const pin = `sha256/${createHash('sha256').update(spki).digest('base64')}`;
      return pin === proxy.pin_sha256 ? tls.checkServerIdentity(host, cert) : new Error('pin mismatch');
    },
  });
  const ws = new WebSocket('wss://127.0.0.1/relay/ws', { createConnection: () => socket });
  return new Promise((resolve, reject) => {
    ws.on('open', () => ws.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload })));
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString());
      if (f.type === 'auth.ok') resolve({ ...f.payload, close: () => ws.close() });
      if (f.type === 'auth.fail') reject(new Error(JSON.stringify(f)));
    });
    ws.on('error', reject);
  });
}

describe('Reach (spec 4.11): the broker and the relay connector', () => {
  const dir = tempHome();
  const hostId = newId();
  const hostToken = newToken();
  const credentials = path.join(dir, 'credentials.json');
  const brokerLogs: string[] = [];
  const forwarded: Buffer[] = [];
  let broker: ReachBroker;
  let brokerPort = 0;
  let relay: TestRelay;
  const logger = pino({ level: 'debug' }, new Writable({ write: (c, _e, cb) => (brokerLogs.push(c.toString()), cb()) }));
  const startBroker = async (port = 0) => {
    broker = new ReachBroker({
      credentialsFile: credentials,
      listen: '127.0.0.1',
      port,
      logger,
      onForward: (_d, b) => forwarded.push(Buffer.from(b)),
    });
    await broker.start();
    brokerPort = broker.port;
  };
  const reachState = async () => (await call(relay, 'GET', '/health')).body.secure_link.reach;

  beforeAll(async () => {
    fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
    await startBroker();
    const home = tempHome();
    fs.mkdirSync(path.join(home, 'relay', 'secure-link'), { recursive: true });
    fs.writeFileSync(path.join(home, 'relay', 'secure-link', 'host-id'), `${hostId}\n`);
    relay = await startRelay({
      home,
      env: {
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
        RELAY_SECURE_LINK_BROKER_URL: `ws://127.0.0.1:${brokerPort}`,
        RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
      },
      reachBackoff: { baseMs: 50, maxMs: 200 },
      // The broker lives on the wall clock: the relay's expiry times must be real ones here.
      clock: new ManualClock(new Date().toISOString()),
    });
    await until(async () => (await reachState()).state === 'connected');
  });
  afterAll(async () => {
    await relay.close();
    await broker.close();
  });

  it('the relay registers with its host token and reports connected; the broker knows it only by digest', async () => {
    expect(await reachState()).toMatchObject({ enabled: true, state: 'connected', host_id: hostId, transport: 'opaque_inner_tls' });
    expect(broker.stats().hosts_online).toBe(1);
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'secure_link.reach_changed')
        .map((e) => e.data.state),
    ).toEqual(['connected']);
    expect(JSON.stringify(readEvents(relay.home)) + brokerLogs.join('') + relay.logs.join('')).not.toContain(hostToken);
  });

  it('pairs through the broker: the QR bootstrap credential, pinned TLS inside, auth.ok with a route credential; the broker forwards only ciphertext', async () => {
    const mint = await call(relay, 'POST', '/pairing/mint', {});
    const qr = JSON.parse(mint.body.qr_payload);
    const cand = qr.endpoints.find((e: { role: string }) => e.role === 'outbound_broker');
    expect(cand).toMatchObject({
      recommended: false,
      experimental: true,
      security: 'e2ee_pinned_tls',
      broker: { protocol_version: 1, url: `ws://127.0.0.1:${brokerPort}/v1/connect`, host_id: hostId, credential_kind: 'bootstrap' },
    });
    expect(cand.broker.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Number.isInteger(cand.broker.expires_at)).toBe(true);
    expect(qr.endpoints.map((e: { role: string }) => e.role)).toEqual(['plugin_proxy', 'outbound_broker']);
    const s = await clientStream(cand.broker.url, hostId, 'bootstrap', cand.broker.token);
    if ('error' in s) throw new Error(s.error);
    const ok = await authThrough(s.duplex, cand.proxy, { pairing_code: qr.relay.code, device_id: 'reach-phone', device_name: 'Far away' });
    expect(ok.route_credential).toMatchObject({
      kind: 'broker_route',
      broker_url: cand.broker.url,
      host_id: hostId,
      credential_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    });
    expect(Number.isInteger(ok.route_credential.expires_at)).toBe(true);
    const all = Buffer.concat(forwarded).toString('latin1');
    for (const secret of [qr.relay.code, ok.session_token, 'system', 'auth.ok', 'pairing_code', 'reach-phone']) expect(all).not.toContain(secret);
    expect(brokerLogs.join('')).not.toMatch(
      new RegExp([qr.relay.code, ok.session_token, cand.broker.token, 'auth.ok'].map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')),
    );
    // The bootstrap credential was for one match.
    const again = await clientStream(cand.broker.url, hostId, 'bootstrap', cand.broker.token);
    expect(again).toEqual({ error: 'replayed' });
    // The route credential brings the phone back, with room for its other streams (reach-broker-limits has the bound).
    const back = await clientStream(cand.broker.url, hostId, 'route', ok.route_credential.token);
    if ('error' in back) throw new Error(back.error);
    const second = await clientStream(cand.broker.url, hostId, 'route', ok.route_credential.token);
    if ('error' in second) throw new Error(second.error);
    second.ws.close();
    const resumed = await authThrough(back.duplex, cand.proxy, { session_token: ok.session_token });
    expect(resumed.token_prefix).toBe(ok.session_token.slice(0, 8));
    resumed.close();
    ok.close();
    back.ws.close();
    s.ws.close();
  });

  it('the broker refuses credentials in the URL or a header, bad registrations and a wrong host token', async () => {
    const raw = async (suffix: string, headers: Record<string, string> = {}) => {
      const ws = new WebSocket(`ws://127.0.0.1:${brokerPort}/v1/connect${suffix}`, { headers });
      return new Promise<number>((r) => ws.once('unexpected-response', (_q, res) => r(res.statusCode ?? 0)).once('open', () => r(101)));
    };
    expect(await raw('?token=x')).toBe(400);
    expect(await raw('', { authorization: `Bearer ${hostToken}` })).toBe(400);
    const health = await fetch(`http://127.0.0.1:${brokerPort}/health`).then((r) => r.json());
    expect(health).toMatchObject({ ok: true, service: 'svc_reach', protocol_version: 1, hosts_online: 1 });
    const ws = new WebSocket(`ws://127.0.0.1:${brokerPort}/v1/connect`);
    await new Promise((r) => ws.once('open', r));
    ws.send(
      JSON.stringify({
        type: 'register',
        protocol_version: 1,
        role: 'host',
        host_id: hostId,
        connection_id: newId(),
        credential_kind: 'host',
        token: newToken(),
      }),
    );
    const err = await new Promise<Record<string, unknown>>((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
    expect(err).toEqual({ type: 'error', protocol_version: 1, code: 'unauthorized' });
    expect(await new Promise((r) => ws.once('close', (code) => r(code)))).toBe(1008);
    expect(() => new ReachBroker({ credentialsFile: credentials, listen: '0.0.0.0', port: 0, logger })).toThrow(BrokerConfigError);
  });

  it('the connector backs off when the broker dies and connects again when it returns', async () => {
    await broker.close();
    await until(async () => (await reachState()).state === 'backoff');
    expect((await reachState()).last_error).toEqual(expect.any(String));
    await startBroker(brokerPort);
    await until(async () => (await reachState()).state === 'connected');
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'secure_link.reach_changed')
        .map((e) => e.data.state),
    ).toEqual(['connected', 'lost', 'connected']);
    // The QR is published again to the new broker.
    const qr = JSON.parse((await call(relay, 'POST', '/pairing/mint', {})).body.qr_payload);
    expect(qr.endpoints.some((e: { role: string }) => e.role === 'outbound_broker')).toBe(true);
  });
});

describe('Reach misconfigured', () => {
  it('without Secure Link or a token: unavailable, with the reason, and the relay runs on', async () => {
    const relay = await startRelay({ env: { RELAY_EXPERIMENTAL_REACH_ENABLED: '1', RELAY_SECURE_LINK_BROKER_URL: 'wss://broker.example' } });
    try {
      const reach = (await call(relay, 'GET', '/health')).body.secure_link.reach;
      expect(reach).toMatchObject({ enabled: true, state: 'unavailable', last_error: expect.stringContaining('Secure Link') });
    } finally {
      await relay.close();
    }
  });
});
