import { createHash, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import * as path from 'node:path';
import { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import pino from 'pino';
import { WebSocket } from 'ws';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { readForwarderKey } from '../../apps/relay/src/common/http/forwarded-peer';
import { DashboardIngress, INGRESS_BASE } from '../../apps/relay/src/ingress/dashboard-ingress';
import { ReachBroker } from '../../apps/relay/src/reach/broker';
import { newId, newToken, tokenSha256 } from '../../apps/relay/src/reach/protocol';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';

type Answer = { status: number; body: any; headers: http.IncomingHttpHeaders };

function pinnedAgent(c: { pin_sha256: string; cert_der: string }): https.Agent {
  return new https.Agent({
    ca: `-----BEGIN CERTIFICATE-----\n${c.cert_der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
    checkServerIdentity: (host, cert) => {
      const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
      return `sha256/${createHash('sha256').update(spki).digest('base64')}` === c.pin_sha256 ? tls.checkServerIdentity(host, cert) : new Error('pin');
    },
  });
}

/** One request from a chosen source address (any 127.x.y.z on Linux): the peers of these tests. */
function request(url: string, opts: { from?: string; agent?: http.Agent; headers?: Record<string, string>; method?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https') ? https : http;
    const req = mod.request(url, { method: opts.method ?? 'GET', agent: opts.agent, localAddress: opts.from, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* text */
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const BAD = bearer('B'.repeat(43));
const blocks = (relay: TestRelay) =>
  readEvents(relay.home)
    .filter((e) => e.type === 'ratelimit.blocked')
    .map((e) => e.data.ip);

describe("Secure Link's /api has a gate too: the API key, checked before anything reaches the API server (issue item 9)", () => {
  const KEY = 'api-key-of-the-agent-0123456789abcdef';
  let api: { server: http.Server; url: string; seen: string[] };
  beforeAll(async () => {
    const seen: string[] = [];
    // Like a compatibility hook's route: /api/config answers whoever asks.
    const server = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/health') return res.end('{"status":"ok"}');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ model: 'secret-model', provider_key_hint: 'sk-...' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    api = { server, seen, url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}` };
  });
  afterAll(() => api.server.close());

  const relayWith = (env: Record<string, string>) =>
    startRelay({
      env: { RELAY_SECURE_LINK_ENABLED: '1', RELAY_SECURE_LINK_HOST: '127.0.0.1', RELAY_SECURE_LINK_PORT: '0', RELAY_WEBAPI_URL: api.url, ...env },
    });

  it('no credential, a wrong key or a relay session token: 401 and nothing reaches the API; the key: passed on', async () => {
    const relay = await relayWith({ API_SERVER_KEY: KEY });
    try {
      const { token, phone } = await pairPhone(relay);
      phone.close();
      const c = (await call(relay, 'GET', '/health')).body.secure_proxy.proxy;
      const agent = pinnedAgent(c);
      api.seen.length = 0;
      for (const headers of [
        {},
        bearer('not-the-key-0123456789'),
        bearer(token),
        { authorization: `Basic ${Buffer.from(`x:${KEY}`).toString('base64')}` },
      ]) {
        const r = await request(`${c.url}/api/api/config`, { agent, headers });
        expect(r).toMatchObject({ status: 401, body: { ok: false, code: 'secure_link.api_unauthorized' } });
      }
      expect(api.seen.filter((p) => p !== '/health')).toEqual([]);
      // Only the API server's own health answers without the key (the app probes it): that exact path.
      expect(await request(`${c.url}/api/health`, { agent })).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect((await request(`${c.url}/api/health?x=1`, { agent })).status).toBe(401);
      const ok = await request(`${c.url}/api/api/config`, { agent, headers: bearer(KEY) });
      expect(ok).toMatchObject({ status: 200, body: { model: 'secret-model' } });
      expect(api.seen.filter((p) => p !== '/health')).toEqual(['/api/config']);
      // Wrong keys feed the rate limiter like bad session tokens (a missing one does not): five, and this peer
      // is blocked, even with the key.
      expect(readEvents(relay.home).filter((e) => e.type === 'auth.failed')).toHaveLength(2);
      for (let i = 0; i < 3; i++)
        expect((await request(`${c.url}/api/v1/models`, { agent, headers: bearer(`wrong-${i}-0123456789`) })).status).toBe(401);
      const blocked = await request(`${c.url}/api/api/config`, { agent, headers: bearer(KEY) });
      expect(blocked).toMatchObject({ status: 429, body: { code: 'auth.rate_limited' } });
      expect(blocked.headers['retry-after']).toBe('300');
      expect(JSON.stringify(readEvents(relay.home)) + relay.logs.join('')).not.toContain(KEY);
      expect((await request(`${c.url}/relay/health`, { agent })).body.services.api).toMatchObject({ supported: true, available: true });
    } finally {
      await relay.close();
    }
  });

  it('a relay without API_SERVER_KEY does not serve /api at all (503), and says so in /relay/health', async () => {
    const relay = await relayWith({});
    try {
      const c = (await call(relay, 'GET', '/health')).body.secure_proxy.proxy;
      const agent = pinnedAgent(c);
      api.seen.length = 0;
      const r = await request(`${c.url}/api/api/config`, { agent, headers: bearer(KEY) });
      expect(r).toMatchObject({ status: 503, body: { ok: false, code: 'secure_link.api_unauthenticated' } });
      expect((await request(`${c.url}/relay/health`, { agent })).body.services.api).toMatchObject({ available: false });
      expect(api.seen).toEqual([]);
    } finally {
      await relay.close();
    }
  });
});

describe('rate limits through local forwarders are keyed by the peer they vouch for (issue item 11)', () => {
  describe('Secure Link', () => {
    let relay: TestRelay;
    let token: string;
    let c: { url: string; pin_sha256: string; cert_der: string };
    beforeAll(async () => {
      relay = await startRelay({ env: { RELAY_SECURE_LINK_ENABLED: '1', RELAY_SECURE_LINK_HOST: '127.0.0.1', RELAY_SECURE_LINK_PORT: '0' } });
      const p = await pairPhone(relay);
      p.phone.close();
      token = p.token;
      c = (await call(relay, 'GET', '/health')).body.secure_proxy.proxy;
    });
    afterAll(() => relay.close());

    it('6 bad bearers through Secure Link from loopback (a local tunnel) block that peer only: not the operator, not another peer', async () => {
      // A fresh agent a caller: each its own TLS connections, from its own source address.
      const attacker = { agent: pinnedAgent(c), from: '127.0.0.1' };
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await request(`${c.url}/relay/sessions`, { ...attacker, headers: BAD })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      expect(blocks(relay)).toEqual(['127.0.0.1 via secure-link']);
      // The attacker's own peer stays blocked, with a valid token too.
      expect((await request(`${c.url}/relay/sessions`, { ...attacker, headers: bearer(token) })).status).toBe(429);
      // The operator on loopback, with a valid token: not locked out.
      expect((await request(`${relay.url}/sessions`, { headers: bearer(token) })).status).toBe(200);
      // Another peer through Secure Link: not locked out.
      expect((await request(`${c.url}/relay/sessions`, { agent: pinnedAgent(c), from: '127.0.0.2', headers: bearer(token) })).status).toBe(200);
    });

    it('a peer with its own address through Secure Link is that address: a block follows it to the direct port', async () => {
      const from = '127.0.0.3';
      for (let i = 0; i < 5; i++) await request(`${c.url}/relay/sessions`, { agent: pinnedAgent(c), from, headers: BAD });
      expect(blocks(relay)).toContain('127.0.0.3');
      expect((await request(`${relay.url}/sessions`, { from, headers: bearer(token) })).status).toBe(429);
    });

    it('a client sending the forwarding headers itself gains nothing', async () => {
      const forged = { 'x-svc-proxy-peer': '198.51.100.7', 'x-svc-proxy-secret': 'guess-'.repeat(8), 'x-hermes-proxy-peer': '198.51.100.8' };
      // Through Secure Link: the origin's own mark wins, the headers are dropped.
      for (let i = 0; i < 5; i++)
        await request(`${c.url}/relay/sessions`, { agent: pinnedAgent(c), from: '127.0.0.4', headers: { ...BAD, ...forged } });
      // Straight to the relay, from a non-loopback peer: keyed by its socket.
      for (let i = 0; i < 5; i++) await request(`${relay.url}/sessions`, { from: '127.0.0.5', headers: { ...BAD, ...forged } });
      // From loopback with a forwarding header but no valid key: a local proxy, never the vouched address.
      for (let i = 0; i < 5; i++) await request(`${relay.url}/sessions`, { headers: { ...BAD, ...forged, 'x-forwarded-for': '198.51.100.9' } });
      const ips = blocks(relay);
      expect(ips).toEqual(expect.arrayContaining(['127.0.0.4', '127.0.0.5', '127.0.0.1 via proxy']));
      expect(ips.join()).not.toMatch(/198\.51\.100/);
      expect((await request(`${relay.url}/sessions`, { headers: bearer(token) })).status).toBe(200);
    });
  });

  describe('the dashboard ingress', () => {
    let relay: TestRelay;
    let token: string;
    const servers: http.Server[] = [];
    beforeAll(async () => {
      relay = await startRelay();
      const p = await pairPhone(relay);
      p.phone.close();
      token = p.token;
    });
    afterAll(async () => {
      for (const s of servers) s.close();
      await relay.close();
    });
    const mount = async (forwarderKey: string | null) => {
      const ingress = new DashboardIngress({
        relayUrl: relay.url,
        authenticate: () => true,
        consumeTicket: () => false,
        allowedHosts: [],
        allowedOrigins: [],
        forwarderKey,
      });
      const server = http.createServer((req, res) => void ingress.handle(req, res));
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}${INGRESS_BASE}`;
    };

    it('with the forwarder key: each dashboard caller is its own peer; the operator and other callers are not locked out', async () => {
      const key = readForwarderKey(relay.home);
      expect(key).toEqual(expect.any(String));
      expect(fs.statSync(path.join(relay.home, 'relay', 'forwarder.key')).mode & 0o777).toBe(0o600);
      const base = await mount(key);
      const session = (t: string) => ({ 'x-svc-relay-session': t });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await request(`${base}/sessions`, { from: '127.0.0.6', headers: session('B'.repeat(43)) })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      expect(blocks(relay)).toEqual(['127.0.0.6']);
      expect((await request(`${base}/sessions`, { from: '127.0.0.7', headers: session(token) })).status).toBe(200);
      expect((await request(`${relay.url}/sessions`, { headers: bearer(token) })).status).toBe(200);
    });

    it('without it: the ingress callers share one limit, still apart from the operator', async () => {
      const base = await mount(null);
      for (let i = 0; i < 5; i++) await request(`${base}/sessions`, { from: '127.0.0.8', headers: { 'x-svc-relay-session': 'B'.repeat(43) } });
      expect(blocks(relay)).toContain('127.0.0.1 via proxy');
      expect((await request(`${relay.url}/sessions`, { headers: bearer(token) })).status).toBe(200);
    });
  });

  describe("Reach: a phone is keyed by its route credential (the broker is every stream's peer)", () => {
    const dir = tempHome();
    const hostId = newId();
    const hostToken = newToken();
    let broker: ReachBroker;
    let relay: TestRelay;
    beforeAll(async () => {
      const credentials = path.join(dir, 'credentials.json');
      fs.writeFileSync(credentials, JSON.stringify({ hosts: { [hostId]: { host_token_sha256: tokenSha256(hostToken) } } }));
      broker = new ReachBroker({ credentialsFile: credentials, listen: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
      await broker.start();
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
          RELAY_SECURE_LINK_BROKER_URL: broker.url.replace('/v1/connect', ''),
          RELAY_SECURE_LINK_BROKER_HOST_TOKEN: hostToken,
        },
        reachBackoff: { baseMs: 50, maxMs: 200 },
        clock: new ManualClock(new Date().toISOString()),
      });
      const end = Date.now() + 10_000;
      while ((await call(relay, 'GET', '/health')).body.secure_link.reach.state !== 'connected') {
        if (Date.now() > end) throw new Error('reach did not connect');
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    afterAll(async () => {
      await relay.close();
      await broker.close();
    });

    /** A phone's Reach stream, Secure Link's pinned TLS inside it. */
    async function reachTls(kind: 'bootstrap' | 'route', credential: string, proxy: { pin_sha256: string; cert_der: string }) {
      for (let attempt = 0; ; attempt++) {
        const ws = new WebSocket(broker.url, { perMessageDeflate: false });
        await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
        ws.send(
          JSON.stringify({
            type: 'register',
            protocol_version: 1,
            role: 'client',
            host_id: hostId,
            connection_id: newId(),
            credential_kind: kind,
            token: credential,
          }),
        );
        const first = await new Promise<{ type: string; code?: string }>((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
        // The broker frees a route credential when it sees the last stream's close: try again shortly.
        if (first.type !== 'matched' && first.code === 'host_busy' && attempt < 50) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        if (first.type !== 'matched') throw new Error(first.code ?? first.type);
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
        const socket = tls.connect({ socket: duplex, host: '127.0.0.1', ...pinnedAgent(proxy).options });
        await new Promise((r, j) => (socket.once('secureConnect', r), socket.once('error', j)));
        return { socket, ws };
      }
    }

    /** One HTTP request on its own Reach stream. */
    async function viaReach(route: string, proxy: { pin_sha256: string; cert_der: string }, headers: Record<string, string>): Promise<number> {
      const { socket, ws } = await reachTls('route', route, proxy);
      try {
        return await new Promise<number>((resolve, reject) => {
          const req = https.request({ host: '127.0.0.1', path: '/relay/sessions', headers, createConnection: () => socket }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject);
          req.end();
        });
      } finally {
        socket.destroy();
        ws.close();
        await new Promise((r) => ws.once('close', r));
      }
    }

    async function pairThroughReach(name: string) {
      const qr = JSON.parse((await call(relay, 'POST', '/pairing/mint', {})).body.qr_payload);
      const cand = qr.endpoints.find((e: { role: string }) => e.role === 'outbound_broker');
      const { socket } = await reachTls('bootstrap', cand.broker.token, cand.proxy);
      const ws = new WebSocket('wss://127.0.0.1/relay/ws', { createConnection: () => socket });
      const ok = await new Promise<Record<string, any>>((resolve, reject) => {
        ws.on('open', () =>
          ws.send(
            JSON.stringify({
              channel: 'system',
              type: 'auth',
              id: 'a',
              payload: { pairing_code: qr.relay.code, device_id: name, device_name: name },
            }),
          ),
        );
        ws.on('message', (d) => {
          const f = JSON.parse(d.toString());
          if (f.type === 'auth.ok') resolve(f.payload);
          if (f.type === 'auth.fail') reject(new Error(JSON.stringify(f)));
        });
        ws.on('error', reject);
      });
      ws.close();
      return { token: ok.session_token as string, route: ok.route_credential as { token: string; credential_id: string }, proxy: cand.proxy };
    }

    it("6 bad bearers over one phone's route block that route only; another Reach phone is not locked out", async () => {
      const a = await pairThroughReach('reach-a');
      const b = await pairThroughReach('reach-b');
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push(await viaReach(a.route.token, a.proxy, BAD));
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      expect(blocks(relay)).toEqual([`route:${a.route.credential_id} via reach`]);
      expect(await viaReach(a.route.token, a.proxy, bearer(a.token))).toBe(429);
      expect(await viaReach(b.route.token, b.proxy, bearer(b.token))).toBe(200);
      expect((await call(relay, 'GET', '/sessions', undefined, bearer(a.token))).status).toBe(200);
    });
  });
});
