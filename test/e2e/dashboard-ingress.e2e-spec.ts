import * as http from 'node:http';
import type * as net from 'node:net';
import { WebSocket } from 'ws';
import { DashboardIngress, INGRESS_BASE } from '../../apps/relay/src/ingress/dashboard-ingress';
import { pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';

/**
 * The ingress inside a small real HTTP server standing in for the dashboard: it authenticates with its
 * own cookie, mints single-use WebSocket tickets, and mounts the component under its plugin base.
 */
async function dashboard(relay: TestRelay, opts: { operatorKey?: boolean } = {}) {
  const tickets = new Set<string>();
  let ingress: DashboardIngress | null = null;
  const server = http.createServer((req, res) => {
    if (ingress?.handle(req, res)) return;
    res.writeHead(404).end('dashboard page');
  });
  server.on('upgrade', (req, socket, head) => {
    if (!ingress?.handleUpgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  ingress = new DashboardIngress({
    relayUrl: relay.url,
    authenticate: (req) => /(^|;\s*)dash=ok(;|$)/.test(req.headers.cookie ?? ''),
    consumeTicket: (t) => tickets.delete(t),
    // The dashboard's own host and origin (what a browser or the app's dashboard client sends).
    allowedHosts: [host],
    allowedOrigins: [`http://${host}`],
    // What the dashboard process reads from the relay's home: provider usage is the operator's.
    operatorKey: opts.operatorKey === false ? null : relay.operatorKey,
  });
  return { server, ingress, tickets, base: `http://${host}${INGRESS_BASE}`, host };
}

async function req(url: string, method: string, headers: Record<string, string> = {}, body?: unknown) {
  const r = await fetch(url, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* keep */
  }
  return { status: r.status, body: parsed, headers: r.headers };
}

describe('dashboard ingress (spec 4.11): the relay at the dashboard origin, a fixed allowlist', () => {
  let relay: TestRelay;
  let d: Awaited<ReturnType<typeof dashboard>>;
  let token: string;
  const DASH = { cookie: 'dash=ok' };
  beforeAll(async () => {
    relay = await startRelay();
    d = await dashboard(relay);
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    d.server.close();
    await relay.close();
  });

  it('forwards an allowed route with the relay session as the bearer; needs both the dashboard login and the session', async () => {
    const ok = await req(`${d.base}/sessions`, 'GET', { ...DASH, 'x-svc-relay-session': token });
    expect(ok.status).toBe(200);
    expect(ok.body.sessions.find((s: { is_current: boolean }) => s.is_current)).toBeTruthy();
    expect((await req(`${d.base}/sessions`, 'GET', { ...DASH, 'x-hermes-relay-session': token })).status).toBe(200);
    expect(await req(`${d.base}/sessions`, 'GET', { 'x-svc-relay-session': token })).toMatchObject({
      status: 401,
      body: { code: 'ingress.dashboard_auth' },
    });
    expect(await req(`${d.base}/sessions`, 'GET', DASH)).toMatchObject({ status: 401, body: { code: 'ingress.no_relay_session' } });
    // A wrong session is the relay's refusal, passed back as it is (not turned into a 502).
    expect((await req(`${d.base}/sessions`, 'GET', { ...DASH, 'x-svc-relay-session': 'x'.repeat(43) })).status).toBe(401);
  });

  it('never forwards pairing, admin, bridge control, Device Control or desktop dispatch, and never as the loopback operator', async () => {
    const before = readEvents(relay.home).length;
    const forbidden: Array<[string, string]> = [
      ['POST', '/pairing/mint'],
      ['POST', '/pairing/register'],
      ['POST', '/pairing/approve'],
      ['GET', '/bridge/status'],
      ['POST', '/bridge/select-active'],
      ['GET', '/ping'],
      ['POST', '/tap'],
      ['GET', '/desktop/health'],
      ['POST', '/desktop/desktop_terminal'],
      ['POST', '/media/register'],
      ['GET', '/media/inspect'],
      ['GET', '/relay/info'],
      ['PATCH', '/relay/security'],
      ['GET', '/secure-link/preflight'],
      ['POST', '/relay/profiles/enable'],
      ['GET', '/notifications/recent'],
      ['POST', '/phone/message'],
      ['GET', '/console/api/state'],
      ['GET', '/'],
    ];
    for (const [method, path] of forbidden) {
      const r = await req(`${d.base}${path}`, method, { ...DASH, 'x-svc-relay-session': token }, method === 'GET' ? undefined : {});
      expect([method, path, r.status]).toEqual([method, path, 404]);
      expect(r.body.code).toBe('ingress.not_allowed');
    }
    expect((await req(`${d.base}/sessions`, 'POST', { ...DASH, 'x-svc-relay-session': token }, {})).status).toBe(405);
    const raw = (p: string) =>
      new Promise<number>((resolve, reject) =>
        http
          .get(
            {
              host: '127.0.0.1',
              port: Number(d.host.split(':')[1]),
              path: `${INGRESS_BASE}${p}`,
              headers: { ...DASH, 'x-svc-relay-session': token },
            },
            (res) => (res.resume(), resolve(res.statusCode ?? 0)),
          )
          .on('error', reject),
      );
    expect(await raw('/sessions/%2e%2e/pairing/mint')).toBe(400);
    expect(await raw('/sessions/../pairing/mint')).toBe(400);
    expect(readEvents(relay.home)).toHaveLength(before);
    // An allowed route that loopback could open without a bearer still needs the session through the ingress.
    expect((await req(`${d.base}/phone/threads`, 'GET', { ...DASH, 'x-svc-relay-session': 'y'.repeat(43) })).status).toBe(401);
  });

  it('WebSocket: the dashboard host and origin, a fresh single-use ticket, then the relay’s own first-frame auth; closed when the plugin is disabled', async () => {
    const open = (query: string, headers: Record<string, string> = {}) =>
      new Promise<{ ws?: WebSocket; status?: number }>((resolve) => {
        const ws = new WebSocket(`ws://${d.host}${INGRESS_BASE}/ws${query}`, { headers: { origin: `http://${d.host}`, ...headers } });
        ws.once('open', () => resolve({ ws }));
        ws.once('unexpected-response', (_q, res) => resolve({ status: res.statusCode }));
        ws.once('error', () => resolve({ status: -1 }));
      });
    expect((await open('')).status).toBe(401);
    expect((await open('?ticket=never-minted')).status).toBe(401);
    d.tickets.add('t-1');
    expect((await open('?ticket=t-1', { origin: 'https://evil.example' })).status).toBe(403);
    d.tickets.add('t-2');
    const { ws } = await open('?ticket=t-2');
    expect(ws).toBeDefined();
    // The ticket was single use.
    expect((await open('?ticket=t-2')).status).toBe(401);
    const frames: Array<Record<string, any>> = [];
    ws!.on('message', (m) => frames.push(JSON.parse(m.toString())));
    ws!.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { session_token: token } }));
    const until = async (f: () => boolean) => {
      for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    await until(() => frames.some((f) => f.type === 'auth.ok'));
    expect(frames.find((f) => f.type === 'auth.ok')).toBeTruthy();
    expect(d.ingress.openSockets).toBe(1);
    const closed = new Promise<number>((r) => ws!.once('close', (code) => r(code)));
    d.ingress.disable();
    expect(await closed).toBe(1001);
    expect((await req(`${d.base}/sessions`, 'GET', { ...DASH, 'x-svc-relay-session': token })).status).toBe(503);
    d.ingress.enable();
    expect((await req(`${d.base}/sessions`, 'GET', { ...DASH, 'x-svc-relay-session': token })).status).toBe(200);
  });

  it('the dashboard-side provider usage: the dashboard login, answered from the relay’s /usage/providers', async () => {
    const url = `http://${d.host}/api/plugins/svc-relay/provider-usage`;
    expect((await req(url, 'GET')).status).toBe(401);
    // This relay has provider usage off: the relay's own 404 naming the variable comes back as it is.
    expect(await req(`${url}?profile=default&junk=1`, 'GET', DASH)).toMatchObject({ status: 404, body: { code: 'usage.disabled' } });
    const on = await startRelay({ env: { RELAY_PROVIDER_USAGE_ENABLED: '1' } });
    try {
      const d2 = await dashboard(on);
      const r = await req(`http://${d2.host}/api/plugins/svc-relay/provider-usage?profile=default`, 'GET', DASH);
      expect(r).toMatchObject({ status: 200, body: { ok: true, scope: { profile: 'default', session_id: null } } });
      expect((await req(`http://${d2.host}/api/plugins/svc-relay/provider-usage`, 'POST', DASH, {})).status).toBe(405);
      d2.server.close();
      // A dashboard that cannot read the operator key says so; the relay never answers it as the operator.
      const d3 = await dashboard(on, { operatorKey: false });
      const keyless = await req(`http://${d3.host}/api/plugins/svc-relay/provider-usage?profile=default`, 'GET', DASH);
      expect(keyless).toMatchObject({ status: 503, body: { code: 'ingress.operator_key_missing' } });
      d3.server.close();
    } finally {
      await on.close();
    }
  });

  it('mounts only under its base: other dashboard paths are the dashboard’s', async () => {
    const r = await fetch(`http://${d.host}/api/plugins/other/x`);
    expect(await r.text()).toBe('dashboard page');
  });
});
