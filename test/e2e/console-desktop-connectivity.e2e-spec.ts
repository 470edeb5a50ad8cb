import * as http from 'node:http';
import * as net from 'node:net';
import { PREFLIGHT_TIMEOUT_MS } from '../../apps/relay/src/console/features/connectivity.console.controller';
import { readEvents, startRelay, type TestRelay, operatorHeaderFor } from '../support/harness';
import { call } from '../support/http';
import { CLI_TOOLS, FakeDesktop } from '../support/desktop';
import { freePort } from '../support/ports';

/** Polls a condition the relay exposes (reports are written within their 1 s window, on a busy machine later). */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met in ${ms} ms: ${JSON.stringify(v).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** node:http, because fetch will not send a Host header of our choosing. */
function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...operatorHeaderFor(url), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function listening(host = '127.0.0.1'): Promise<{ server: net.Server; port: number; connections: () => number }> {
  let n = 0;
  const server = net.createServer((s) => (n++, s.destroy()));
  return new Promise((resolve) =>
    server.listen(0, host, () => resolve({ server, port: (server.address() as net.AddressInfo).port, connections: () => n })),
  );
}

describe('console Desktop page API', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ config: { desktop: { defaultMs: 300, computerUseMs: 600, adbMs: 800 } } });
  });
  afterAll(() => relay.close());

  it('with no desktop: no grant, no clients, no calls', async () => {
    const v = (await call(relay, 'GET', '/console/api/desktop')).body;
    expect(v).toMatchObject({ ok: true, granted_sessions: 0, clients: [], calls: [], control_sessions: [], in_flight: 0 });
    expect((await call(relay, 'GET', '/console/api/features')).body.features.map((f: { id: string }) => f.id)).toEqual(
      expect.arrayContaining(['desktop', 'connectivity']),
    );
  });

  it('a desktop client with its workspace, editor and tools; its calls with outcome and duration, never arguments or results', async () => {
    const d = await FakeDesktop.pair(relay, { name: 'axiom-desktop' });
    d.workspace('/home/ana/src/relay');
    d.status();
    d.phone.send('desktop', 'active_editor', {
      version: 1,
      ts: 1,
      source: 'tmux',
      cwd: '/home/ana/src/relay',
      command: 'vim hidden.txt',
      editor: 'vim',
    });
    const view = async () => (await call(relay, 'GET', '/console/api/desktop')).body;
    let v = await until(view, (x) => x.clients[0]?.serving === true && x.clients[0]?.active_editor !== null);
    expect(v.granted_sessions).toBe(1);
    expect(v.clients).toEqual([
      expect.objectContaining({
        device_id: d.deviceId,
        device_name: 'axiom-desktop',
        serving: true,
        tools: [...CLI_TOOLS].sort(),
        host: 'axiom-desktop',
        platform: 'linux',
        version: '0.9.0',
        workspace: expect.objectContaining({ cwd: '/home/ana/src/relay', repo_name: 'relay', git_branch: 'main' }),
        active_editor: { source: 'tmux', editor: 'vim', cwd: '/home/ana/src/relay' },
        connected_at: expect.any(Number),
      }),
    ]);

    d.onCommand((cmd) => ({ ok: true, result: { text: `RESULT-PAYLOAD-9911 for ${String((cmd.payload.args as { path: string }).path)}` } }));
    const ok = await call(relay, 'POST', '/desktop/desktop_read_file', { path: '/home/ana/ARGUMENT-SECRET-7731.txt' });
    expect(ok.status).toBe(200);
    d.onCommand(() => null); // never answers: the call times out
    expect((await call(relay, 'POST', '/desktop/desktop_terminal', { command: 'echo ARGUMENT-SECRET-7731' })).status).toBe(504);
    await relay.loop.drain();
    v = (await call(relay, 'GET', '/console/api/desktop')).body;
    expect(v.calls.map((c: Record<string, unknown>) => [c.tool, c.outcome, c.requester])).toEqual([
      ['desktop_terminal', 'timeout', 'operator'],
      ['desktop_read_file', 'ok', 'operator'],
    ]);
    for (const c of v.calls) expect(c.duration_ms).toEqual(expect.any(Number));
    expect(v.outcomes).toEqual({ ok: 1, timeout: 1 });
    const text = JSON.stringify(v);
    expect(text).not.toContain('ARGUMENT-SECRET-7731');
    expect(text).not.toContain('RESULT-PAYLOAD-9911');
    expect(text).not.toContain('hidden.txt');

    d.close();
    v = await until(view, (x) => x.clients.length === 0);
    expect(v.calls).toHaveLength(2); // the calls outlive the client
  });
});

describe('console Connectivity page API', () => {
  describe('a plain relay on loopback', () => {
    let relay: TestRelay;
    beforeAll(async () => {
      relay = await startRelay();
    });
    afterAll(() => relay.close());

    it('says so: the listener, Secure Link and Reach off, the routes a QR carries (a loopback one flagged)', async () => {
      const v = (await call(relay, 'GET', '/console/api/connectivity')).body;
      expect(v.listener).toMatchObject({ host: '127.0.0.1', port: relay.port, tls: false, loopback_only: true, bind_all: false, tls_cert: null });
      expect(v.listener.advertised_url).toBe(`ws://127.0.0.1:${relay.port}`);
      expect(v.secure_link).toMatchObject({ enabled: false, status: 'disabled', url: null, pin: null, port: 9443 });
      expect(v.reach).toMatchObject({ enabled: false, state: 'disabled', last_change: null, broker_url: null });
      expect(v.routes.map((r: { role: string }) => r.role)).toEqual(['relay', 'api_server']);
      expect(v.routes[0]).toMatchObject({ recommended: true, security: 'plain', note: expect.stringContaining('loopback') });
      const o = (await call(relay, 'GET', '/console/api/overview')).body;
      expect(o.secure_link).toEqual({ status: 'disabled', url: null });
      expect((await call(relay, 'GET', '/console/api/pairing')).body).toMatchObject({ tls: false, secure_link: false });
    });

    it('preflights a good host (a free port on loopback) and a bad one (not this machine) without writing anything', async () => {
      const seq = relay.loop.lastSeq;
      const port = await freePort();
      const good = await call(relay, 'POST', '/console/api/connectivity/preflight', { host: '127.0.0.1', port });
      expect(good.status).toBe(200);
      expect(good.body).toMatchObject({
        verdict: 'ready',
        host: '127.0.0.1',
        port,
        candidate_url: `https://127.0.0.1:${port}`,
        restart_required: true,
      });
      const byId = (b: Record<string, any>) => Object.fromEntries((b.checks as Array<{ id: string }>).map((c) => [c.id, c]));
      expect(byId(good.body)).toMatchObject({
        address: { ok: true },
        port: { ok: true, detail: `port ${port} is free` },
        identity: { ok: true, detail: expect.stringContaining('no identity yet') },
      });
      const bad = await call(relay, 'POST', '/console/api/connectivity/preflight', { host: '203.0.113.7', port: 9443 });
      expect(bad.body).toMatchObject({ verdict: 'problems', candidate_url: 'https://203.0.113.7:9443' });
      expect(byId(bad.body)).toMatchObject({
        address: { ok: false, detail: expect.stringContaining('not an address of this machine') },
        port: { ok: null, detail: expect.stringContaining('not tried') },
      });
      await relay.loop.drain();
      expect(relay.loop.lastSeq).toBe(seq);
    });

    it('is no scanner: a port in use is found by listening, never by connecting; a name is not resolved; it is bounded', async () => {
      const busy = await listening();
      try {
        const r = await call(relay, 'POST', '/console/api/connectivity/preflight', { host: '127.0.0.1', port: busy.port });
        expect(r.body.verdict).toBe('problems');
        expect(r.body.checks.find((c: { id: string }) => c.id === 'port')).toEqual({ id: 'port', ok: false, detail: `port ${busy.port} is in use` });
        expect(busy.connections()).toBe(0);
      } finally {
        busy.server.close();
      }
      for (const host of ['169.254.169.254', 'metadata.google.internal', '10.0.0.1']) {
        const started = Date.now();
        const r = await call(relay, 'POST', '/console/api/connectivity/preflight', { host, port: 80 });
        expect(r.status).toBe(200);
        expect(Date.now() - started).toBeLessThan(PREFLIGHT_TIMEOUT_MS);
        const address = r.body.checks.find((c: { id: string }) => c.id === 'address');
        expect(address.ok).not.toBe(true);
        expect(r.body.checks.find((c: { id: string }) => c.id === 'port').ok).toBeNull();
      }
      const named = await call(relay, 'POST', '/console/api/connectivity/preflight', { host: 'metadata.google.internal' });
      expect(named.body.checks.find((c: { id: string }) => c.id === 'address').detail).toContain('not resolved here');
    });

    it.each([
      ['an array', [], 'connectivity.bad_body'],
      ['null', null, 'connectivity.bad_body'],
      ['no host', {}, 'connectivity.bad_host'],
      ['a URL', { host: 'http://127.0.0.1/' }, 'connectivity.bad_host'],
      ['a host with a port', { host: '127.0.0.1:22' }, 'connectivity.bad_host'],
      ['a host with a user', { host: 'root@127.0.0.1' }, 'connectivity.bad_host'],
      ['a path', { host: 'example.org/admin' }, 'connectivity.bad_host'],
      ['a number as host', { host: 2130706433 }, 'connectivity.bad_host'],
      ['port 0', { host: '127.0.0.1', port: 0 }, 'connectivity.bad_port'],
      ['port 65536', { host: '127.0.0.1', port: 65536 }, 'connectivity.bad_port'],
      ['a port string', { host: '127.0.0.1', port: '22' }, 'connectivity.bad_port'],
      ['a fractional port', { host: '127.0.0.1', port: 1.5 }, 'connectivity.bad_port'],
      ['an extra field', { host: '127.0.0.1', url: 'http://169.254.169.254/' }, 'connectivity.bad_body'],
    ])('refuses %s with a 400 and its code', async (_label, body, code) => {
      const r = await call(relay, 'POST', '/console/api/connectivity/preflight', body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, code });
    });

    it.each([
      ['a foreign Host (DNS rebinding)', { host: 'evil.example' }],
      ['a cross-site Origin', { origin: 'http://evil.example' }],
      ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.9' }],
    ])('refuses %s on every new route', async (_label, headers) => {
      for (const [method, path] of [
        ['GET', '/console/api/desktop'],
        ['GET', '/console/api/connectivity'],
        ['POST', '/console/api/connectivity/preflight'],
      ]) {
        const r = await raw(
          `${relay.url}${path}`,
          method,
          { 'content-type': 'application/json', ...headers },
          method === 'POST' ? '{"host":"127.0.0.1"}' : undefined,
        );
        expect([path, r.status, r.body.code]).toEqual([path, 403, 'auth.loopback_only']);
      }
    });

    it('refuses a non-loopback peer, and a preflight that is not JSON (a cross-site form)', async () => {
      const fastify = relay.app.getHttpAdapter().getInstance();
      for (const [method, url] of [
        ['GET', '/console/api/desktop'],
        ['GET', '/console/api/connectivity'],
        ['POST', '/console/api/connectivity/preflight'],
      ] as const) {
        const res = await fastify.inject({
          method,
          url,
          remoteAddress: '192.168.1.20',
          headers: { 'content-type': 'application/json' },
          ...(method === 'POST' ? { payload: '{"host":"127.0.0.1"}' } : {}),
        });
        expect([url, res.statusCode]).toEqual([url, 403]);
      }
      const form = await raw(`${relay.url}/console/api/connectivity/preflight`, 'POST', { 'content-type': 'text/plain' }, '{"host":"127.0.0.1"}');
      expect(form).toMatchObject({ status: 415, body: { code: 'unsupported_media_type' } });
      expect(relay.logs.join('')).not.toContain('"statusCode":500');
    });
  });

  describe('a relay serving phones through Secure Link', () => {
    let relay: TestRelay;
    beforeAll(async () => {
      relay = await startRelay({ env: { RELAY_SECURE_LINK_ENABLED: '1', RELAY_SECURE_LINK_HOST: '127.0.0.1', RELAY_SECURE_LINK_PORT: '0' } });
    });
    afterAll(() => relay.close());

    it('shows its origin, pin and expiry, puts it first among the routes, and the overview and pairing say Secure Link', async () => {
      const health = (await call(relay, 'GET', '/health')).body;
      const v = (await call(relay, 'GET', '/console/api/connectivity')).body;
      expect(v.secure_link).toMatchObject({
        enabled: true,
        status: 'available',
        url: health.secure_link.url,
        pin: health.secure_link.identity.pin_sha256,
        source: 'generated',
        subject_alt_names: ['IP:127.0.0.1'],
        last_error: null,
        identity_changed_at: null,
      });
      expect(v.secure_link.days_left).toBeGreaterThan(300);
      const sl = v.routes.find((r: { role: string }) => r.role === 'plugin_proxy');
      expect(sl).toMatchObject({ url: health.secure_link.url, security: 'pinned_tls', recommended: true });
      expect(v.routes.find((r: { role: string }) => r.role === 'relay').recommended).toBe(false);
      expect((await call(relay, 'GET', '/console/api/overview')).body.secure_link).toEqual({ status: 'available', url: health.secure_link.url });
      expect((await call(relay, 'GET', '/console/api/pairing')).body.secure_link).toBe(true);
      // What the QR then carries: the same origin (the preview mints nothing).
      const before = readEvents(relay.home).length;
      await call(relay, 'GET', '/console/api/connectivity');
      expect(readEvents(relay.home)).toHaveLength(before);
    });

    it('preflights against its identity: another address means pairing again, its own port is not "in use"', async () => {
      const port = Number(new URL((await call(relay, 'GET', '/health')).body.secure_link.url).port);
      const own = (await call(relay, 'POST', '/console/api/connectivity/preflight', { host: '127.0.0.1', port })).body;
      expect(own.verdict).toBe('ready');
      expect(own.checks.find((c: { id: string }) => c.id === 'port').detail).toContain('serves Secure Link on that port now');
      const other = (await call(relay, 'POST', '/console/api/connectivity/preflight', { host: '0.0.0.0', port: await freePort() })).body;
      expect(other).toMatchObject({ re_pair_required: true, verdict: 'problems' });
      expect(other.checks.find((c: { id: string }) => c.id === 'identity')).toMatchObject({
        ok: false,
        detail: expect.stringContaining('pairing every phone again'),
      });
    });
  });
});
