import { createHash, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { WebSocket } from 'ws';
import { bearer, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call } from '../support/http';

type Seen = { path: string; headers: http.IncomingHttpHeaders };

/** A fake agent API server on loopback: its own key, and what it received. */
async function fakeApi(key: string): Promise<{ server: http.Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    if (req.url === '/health') return res.end('{"status":"ok"}');
    if (req.headers.authorization !== `Bearer ${key}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end('{"error":"invalid api key"}');
    }
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'api_session=leak; Path=/' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-5.5' }], path: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, seen };
}

/** A fake dashboard that requires its login (the gate Secure Link checks), setting a cookie scoped to `/`. */
async function fakeDashboard(gated: boolean): Promise<{ server: http.Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    if (req.url === '/api/health') return res.end(JSON.stringify({ status: 'ok', auth_required: gated }));
    if (req.url === '/login') {
      res.writeHead(302, { location: '/home', 'set-cookie': 'dash=1; Path=/; Domain=example.org; HttpOnly' });
      return res.end();
    }
    res.end(JSON.stringify({ page: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, seen };
}

/** What a pinning client does (the app's PinnedOrSystemTrustManager, the desktop's certPin.ts): the leaf's SPKI hash must be the pin. */
function pinnedAgent(pin: string, certDer: string): https.Agent {
  return new https.Agent({
    ca: `-----BEGIN CERTIFICATE-----\n${certDer.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
    checkServerIdentity: (host, cert) => {
      const err = tls.checkServerIdentity(host, cert);
      if (err) return err;
      const spki = new X509Certificate(cert.raw).publicKey.export({ type: 'spki', format: 'der' });
      const seen = `sha256/${createHash('sha256').update(spki).digest('base64')}`;
      return seen === pin ? undefined : new Error(`cert pin mismatch: ${seen}`);
    },
  });
}

function get(
  url: string,
  agent: https.Agent,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { agent, method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* keep text */
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('Secure Link (spec 4.11): the pinned HTTPS origin', () => {
  let relay: TestRelay;
  let api: Awaited<ReturnType<typeof fakeApi>>;
  let dash: Awaited<ReturnType<typeof fakeDashboard>>;
  let candidate: Record<string, any>;
  let agent: https.Agent;
  const API_KEY = 'api-key-for-the-agent-0123456789';

  beforeAll(async () => {
    api = await fakeApi(API_KEY);
    dash = await fakeDashboard(true);
    relay = await startRelay({
      env: {
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_WEBAPI_URL: api.url,
        RELAY_SECURE_LINK_DASHBOARD_URL: dash.url,
        // Secure Link's /api checks the API key itself before anything reaches the API server.
        API_SERVER_KEY: API_KEY,
      },
    });
  });
  afterAll(async () => {
    await relay.close();
    api.server.close();
    dash.server.close();
  });

  it('makes its identity once (0600 files in a 0700 directory), serves it, and says so in /health and the log', async () => {
    const dir = path.join(relay.home, 'relay', 'secure-link');
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of ['cert.pem', 'key.pem']) expect(fs.statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
    const health = await call(relay, 'GET', '/health');
    expect(health.body.secure_link).toMatchObject({
      enabled: true,
      status: 'available',
      security: 'pinned_tls',
      url: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
    });
    candidate = health.body.secure_proxy;
    expect(candidate).toMatchObject({
      role: 'plugin_proxy',
      recommended: true,
      security: 'pinned_tls',
      proxy: { transport_hint: 'https', surfaces: ['relay', 'api', 'dashboard'] },
    });
    expect(candidate.proxy.pin_sha256).toMatch(/^sha256\/[A-Za-z0-9+/]{43}=$/);
    const cert = new X509Certificate(Buffer.from(candidate.proxy.cert_der, 'base64'));
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8')).toContain('BEGIN CERTIFICATE');
    const started = readEvents(relay.home).filter((e) => e.type === 'secure_link.started');
    expect(started).toHaveLength(1);
    expect(started[0].data).toMatchObject({ pin: candidate.proxy.pin_sha256, created: true, source: 'generated' });
    expect(JSON.stringify(readEvents(relay.home))).not.toContain('PRIVATE KEY');
    agent = pinnedAgent(candidate.proxy.pin_sha256, candidate.proxy.cert_der);
  });

  it('/relay/health answers a pinned client without a credential; a client holding another pin refuses the origin', async () => {
    const ok = await get(`${candidate.proxy.url}/relay/health`, agent);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      status: 'ok',
      security: 'pinned_tls',
      services: { relay: { available: true }, api: { available: true }, dashboard: { available: true } },
    });
    const wrong = pinnedAgent('sha256/' + Buffer.alloc(32, 7).toString('base64'), candidate.proxy.cert_der);
    await expect(get(`${candidate.proxy.url}/relay/health`, wrong)).rejects.toThrow(/pin mismatch/);
    // And a client that trusts only the system's CAs never reaches it.
    await expect(get(`${candidate.proxy.url}/relay/health`, new https.Agent())).rejects.toThrow(/self.signed|unable to verify|certificate/i);
  });

  it('pairs through it: the QR names the origin and its pin; the phone socket on /relay/ws authenticates; /relay HTTP routes take its token', async () => {
    const mint = await call(relay, 'POST', '/pairing/mint', {});
    expect(mint.status).toBe(200);
    const qr = JSON.parse(mint.body.qr_payload);
    const proxy = qr.endpoints.find((e: { role: string }) => e.role === 'plugin_proxy');
    expect(proxy).toMatchObject({
      priority: 0,
      recommended: true,
      proxy: { url: candidate.proxy.url, pin_sha256: candidate.proxy.pin_sha256, cert_der: candidate.proxy.cert_der },
    });
    const ws = new WebSocket(`${proxy.proxy.url.replace('https', 'wss')}/relay/ws`, { agent, headers: { 'x-svc-relay-session': 'ignored-hint' } });
    const ok = await new Promise<Record<string, any>>((resolve, reject) => {
      ws.on('open', () =>
        ws.send(
          JSON.stringify({
            channel: 'system',
            type: 'auth',
            id: 'a',
            payload: { pairing_code: qr.relay.code, device_id: 'sl-phone', device_name: 'Pixel' },
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
    const token = ok.session_token as string;
    const sessions = await get(`${proxy.proxy.url}/relay/sessions`, agent, bearer(token));
    expect(sessions.status).toBe(200);
    expect(sessions.body.sessions.some((s: { device_id: string }) => s.device_id === 'sl-phone')).toBe(true);
    // The desktop CLI appends routes to its socket URL (`.../relay/ws` + `/sessions`): the same route.
    expect((await get(`${proxy.proxy.url}/relay/ws/sessions`, agent, bearer(token))).status).toBe(200);
    // Namespaces share transport trust, never credentials: the relay token is nothing to the API, the API key nothing to the relay.
    const apiWithRelayToken = await get(`${proxy.proxy.url}/api/v1/models`, agent, {
      ...bearer(token),
      cookie: 'relay=1',
      'x-svc-relay-session': token,
    });
    expect(apiWithRelayToken.status).toBe(401);
    const relayWithApiKey = await get(`${proxy.proxy.url}/relay/sessions`, agent, bearer(API_KEY));
    expect(relayWithApiKey.status).toBe(401);
    const apiOk = await get(`${proxy.proxy.url}/api/v1/models?x=1`, agent, { ...bearer(API_KEY), cookie: 'c=1', 'x-hermes-relay-session': 'hint' });
    expect(apiOk).toMatchObject({ status: 200, body: { path: '/v1/models?x=1' } });
    expect(apiOk.headers['set-cookie']).toBeUndefined();
    const received = api.seen.filter((s) => s.path.startsWith('/v1/'));
    for (const s of received) {
      expect(s.headers.cookie).toBeUndefined();
      expect(s.headers['x-svc-relay-session']).toBeUndefined();
      expect(s.headers['x-hermes-relay-session']).toBeUndefined();
    }
    ws.close();
  });

  it('the relay sees the phone, not a loopback operator: loopback-only routes refuse a Secure Link caller from another host', async () => {
    // The origin listens on 127.0.0.1 here, so the TCP peer is loopback: a request through Secure Link is
    // still never the operator's (a local tunnel or the Reach connector must not turn the world into loopback).
    const r = await get(`${candidate.proxy.url}/relay/pairing/mint`, agent, {}, 'POST', '{}');
    expect(r.status).toBe(403);
    expect(readEvents(relay.home).filter((e) => e.type === 'pairing.code_registered' && e.data.source === 'mint')).toHaveLength(1);
  });

  it('the dashboard: cookies and redirects kept under /dashboard, served only while it requires a login', async () => {
    const login = await get(`${candidate.proxy.url}/dashboard/login`, agent);
    expect(login.status).toBe(302);
    expect(login.headers.location).toBe('/dashboard/home');
    expect(login.headers['set-cookie']).toEqual(['dash=1; HttpOnly; Path=/dashboard']);
    const page = await get(`${candidate.proxy.url}/dashboard/home?tab=2`, agent, { cookie: 'dash=1' });
    expect(page.body).toEqual({ page: '/home?tab=2' });
    const seen = dash.seen.find((s) => s.path === '/home?tab=2')!;
    expect(seen.headers).toMatchObject({ cookie: 'dash=1', 'x-forwarded-prefix': '/dashboard', 'x-forwarded-proto': 'https' });
  });

  it('bad paths and other namespaces: clean 4xx', async () => {
    const port = Number(new URL(candidate.proxy.url).port);
    const raw = (p: string) =>
      new Promise<number>((resolve, reject) =>
        https.get({ host: '127.0.0.1', port, path: p, agent }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject),
      );
    expect(await raw('/relay/%2e%2e/etc')).toBe(400);
    expect(await raw('/relay/../pairing/mint')).toBe(400);
    expect(await raw('/api//x')).toBe(400);
    expect(await raw('/api/%2Fetc')).toBe(400);
    const other = await get(`${candidate.proxy.url}/health`, agent);
    expect(other).toMatchObject({ status: 404, body: { ok: false, code: 'secure_link.not_found' } });
    expect((await get(`${candidate.proxy.url}/relay/health`, agent, {}, 'TRACE')).status).toBe(405);
  });

  it('preflight (loopback, read-only): prerequisites, identity, and what a proposed host would mean', async () => {
    const dir = path.join(relay.home, 'relay', 'secure-link');
    const before = fs.readdirSync(dir).map((f) => [f, fs.statSync(path.join(dir, f)).mtimeMs]);
    const r = await call(relay, 'GET', '/secure-link/preflight?host=10.9.9.9&port=9555');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      enabled: true,
      status: 'available',
      identity: { present: true, usable: true, covers_host: true, pin_sha256: candidate.proxy.pin_sha256 },
      proposed: { advertised_host: '10.9.9.9', port: 9555, identity_covers_host: false, restart_required: true, re_pair_required: true },
    });
    // The reset it names is the identity's two files, never the directory (where an older relay kept the Reach host id).
    expect(r.body.proposed.notes).toContain(
      `the identity does not cover 10.9.9.9: before restarting, remove ${dir}/cert.pem and ${dir}/key.pem to make a new identity, then pair every phone again`,
    );
    expect(r.body.identity.days_left).toBeGreaterThan(3000);
    expect(fs.readdirSync(dir).map((f) => [f, fs.statSync(path.join(dir, f)).mtimeMs])).toEqual(before);
    expect((await call(relay, 'GET', '/secure-link/preflight', undefined, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(403);
    expect((await call(relay, 'GET', '/secure-link/preflight?port=99999')).status).toBe(400);
  });

  it('a new identity is visible (event, /health) and means pairing again', async () => {
    const oldPin = candidate.proxy.pin_sha256;
    await relay.close();
    for (const f of ['cert.pem', 'key.pem']) fs.rmSync(path.join(relay.home, 'relay', 'secure-link', f));
    relay = await relay.restart();
    const health = await call(relay, 'GET', '/health');
    expect(health.body.secure_proxy.proxy.pin_sha256).not.toBe(oldPin);
    expect(health.body.secure_link.identity_changed_at).toEqual(expect.any(String));
    const changed = readEvents(relay.home).filter((e) => e.type === 'secure_link.identity_changed');
    expect(changed.map((e) => e.data.previousPin)).toEqual([oldPin]);
    // The old pin no longer reaches the origin.
    await expect(get(`${health.body.secure_proxy.proxy.url}/relay/health`, agent)).rejects.toThrow();
  });
});

describe('Secure Link that cannot start', () => {
  it('a taken port: the relay runs without it and says why', async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as net.AddressInfo).port;
    const relay = await startRelay({
      home: tempHome(),
      env: { RELAY_SECURE_LINK_ENABLED: '1', RELAY_SECURE_LINK_HOST: '127.0.0.1', RELAY_SECURE_LINK_PORT: String(port) },
    });
    try {
      const h = await call(relay, 'GET', '/health');
      expect(h.body.secure_link).toMatchObject({ enabled: true, status: 'unavailable', last_error: expect.stringContaining(`port ${port}`) });
      expect(h.body.secure_proxy).toBeUndefined();
      const mint = await call(relay, 'POST', '/pairing/mint', {});
      expect(JSON.parse(mint.body.qr_payload).endpoints).toBeUndefined();
      expect(readEvents(relay.home).filter((e) => e.type === 'secure_link.unavailable')).toHaveLength(1);
    } finally {
      await relay.close();
      busy.close();
    }
  });

  it('a dashboard that does not require a login is not served (503), and nothing reaches it but the health probe', async () => {
    const open = await fakeDashboard(false);
    const relay = await startRelay({
      home: tempHome(),
      env: {
        RELAY_SECURE_LINK_ENABLED: '1',
        RELAY_SECURE_LINK_HOST: '127.0.0.1',
        RELAY_SECURE_LINK_PORT: '0',
        RELAY_SECURE_LINK_DASHBOARD_URL: open.url,
      },
    });
    try {
      const c = (await call(relay, 'GET', '/health')).body.secure_proxy;
      const a = pinnedAgent(c.proxy.pin_sha256, c.proxy.cert_der);
      const r = await get(`${c.proxy.url}/dashboard/home`, a);
      expect(r).toMatchObject({ status: 503, body: { ok: false, code: 'secure_link.dashboard_unauthenticated' } });
      expect(open.seen.map((s) => s.path)).toEqual(['/api/health']);
    } finally {
      await relay.close();
      open.server.close();
    }
  });

  it('disabled by default: /health says so, the QR has no Secure Link endpoint', async () => {
    const relay = await startRelay();
    try {
      expect((await call(relay, 'GET', '/health')).body.secure_link).toMatchObject({ enabled: false, status: 'disabled' });
    } finally {
      await relay.close();
    }
  });
});
