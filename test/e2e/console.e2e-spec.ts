import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLOSE } from '../../apps/relay/src/phone-socket/envelope';
import { pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';
import { SseClient } from '../support/sse';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** A stand-in build (the real one is exercised by the browser tests in test/console/). */
function fakeBuild(): string {
  // <root>/parent/build, with a file one and two levels above the build: a traversal would find one.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-build-'));
  const dir = path.join(root, 'parent', 'build');
  fs.mkdirSync(path.join(dir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(root, 'parent', 'svc-console-outside.txt'), 'outside');
  fs.writeFileSync(path.join(root, 'svc-console-outside.txt'), 'outside');
  fs.writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><title>svc relay</title><script type="module" src="/console/assets/app-1a2b3c.js"></script>',
  );
  fs.writeFileSync(path.join(dir, 'assets', 'app-1a2b3c.js'), 'console.log(1)');
  return dir;
}

type Json = any;
const json = { 'content-type': 'application/json' };

/** node:http, because fetch will not send a Host header of our choosing. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

describe('console API and stream', () => {
  let relay: TestRelay;
  let api: string;
  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_CONSOLE_DIR: fakeBuild() }, config: { consoleHeartbeatMs: 100 } });
    api = `${relay.url}/console/api`;
  });
  afterAll(() => relay?.close());

  const post = (p: string, body: unknown = {}, headers: Record<string, string> = json) =>
    fetch(`${api}${p}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

  it('prints the console URL at start', () => {
    expect(relay.logs.join('')).toContain(`console at http://127.0.0.1:${relay.port}/console/`);
  });

  describe('loopback rules', () => {
    it.each([
      ['a foreign Origin', { origin: 'http://evil.example' }],
      ['an Origin on another loopback port', { origin: 'http://127.0.0.1:1' }],
      ['a foreign Host (DNS rebinding)', { host: 'evil.example' }],
      ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.9' }],
      ['Forwarded', { forwarded: 'for=203.0.113.9' }],
      ['X-Real-IP', { 'x-real-ip': '203.0.113.9' }],
    ])('refuses a request with %s (API, stream and the app itself)', async (_label, headers) => {
      for (const url of [`${api}/overview`, `${api}/sessions`, `${api}/stream`, `${relay.url}/console/`]) {
        const res = await rawGet(url, headers as Record<string, string>);
        expect(res.status).toBe(403);
        expect(JSON.parse(res.body)).toMatchObject({ ok: false, code: 'auth.loopback_only' });
      }
    });

    it('refuses a non-loopback peer, on every method the console answers', async () => {
      const fastify = relay.app.getHttpAdapter().getInstance();
      for (const [method, url] of [
        ['GET', '/console/api/overview'],
        ['GET', '/console/'],
        ['HEAD', '/console/'],
        ['GET', '/console/api/stream'],
        ['POST', '/console/api/pairing/mint'],
      ] as const) {
        const res = await fastify.inject({
          method,
          url,
          remoteAddress: '192.168.1.20',
          headers: { 'content-type': 'application/json' },
          ...(method === 'POST' ? { payload: '{}' } : {}),
        });
        expect([method, url, res.statusCode]).toEqual([method, url, 403]);
      }
    });

    it('accepts its own origin', async () => {
      const res = await fetch(`${api}/overview`, { headers: { origin: relay.url } });
      expect(res.status).toBe(200);
    });

    it('takes commands only as JSON (a cross-site form cannot send JSON) and writes nothing otherwise', async () => {
      const { phone, prefix } = await pairPhone(relay);
      const before = readEvents(relay.home).length;
      for (const headers of [
        { 'content-type': 'application/x-www-form-urlencoded' },
        { 'content-type': 'text/plain' },
        { 'content-type': 'multipart/form-data; boundary=x' },
        {} as Record<string, string>,
      ]) {
        const res = await post(`/sessions/${prefix}/revoke`, 'a=1', headers);
        expect(res.status).toBe(415);
        expect(await res.json()).toMatchObject({ ok: false, code: 'unsupported_media_type' });
      }
      const mint = await post('/pairing/mint', '{}', { 'content-type': 'text/plain' });
      expect(mint.status).toBe(415);
      await relay.loop.drain();
      expect(readEvents(relay.home).length).toBe(before);
      phone.close();
    });

    it('refuses a command without a Content-Type, with a body or without one (its one client always sends JSON)', async () => {
      const { phone, prefix } = await pairPhone(relay);
      const before = readEvents(relay.home).length;
      // fetch sends bytes with no Content-Type, and a POST without a body with none either.
      for (const body of [new TextEncoder().encode('{}'), undefined]) {
        const res = await fetch(`${api}/sessions/${prefix}/revoke`, { method: 'POST', body });
        expect(res.status).toBe(415);
        expect(await res.json()).toMatchObject({ ok: false, code: 'unsupported_media_type' });
      }
      await relay.loop.drain();
      expect(readEvents(relay.home).length).toBe(before);
      phone.close();
    });
  });

  describe('read models', () => {
    it('overview: version, listen address, chain verified to the last seq, log size, features', async () => {
      const res = await fetch(`${api}/overview`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const o = (await res.json()) as Json;
      expect(o).toMatchObject({ ok: true, tls: false, listen: { host: '127.0.0.1', port: relay.port } });
      expect(o.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(o.chain).toMatchObject({ state: 'verified', verified_to_seq: relay.loop.lastSeq });
      expect(o.log.bytes).toBeGreaterThan(0);
      expect(o.features.map((f: { id: string }) => f.id)).toEqual([
        'overview',
        'sessions',
        'pairing',
        'connectivity',
        'bridge',
        'media',
        'threads',
        'voice',
        'profiles',
        'terminal',
        'desktop',
        'metrics',
        'store',
        'events',
      ]);
      expect(o.recent_events.length).toBeGreaterThan(0);
      expect(o.recent_events[0].seq).toBe(relay.loop.lastSeq);
    });

    it('sessions: a paired phone with its prefix (never the token), online state and transport label', async () => {
      const { phone, token, prefix } = await pairPhone(relay, {
        device: { device_name: 'Pixel of Ada', device_id: 'ada-1' },
        terms: { transport_hint: 'tailscale' },
      });
      const text = await (await fetch(`${api}/sessions`)).text();
      expect(text).not.toContain(token);
      const s = JSON.parse(text).sessions.find((x: { token_prefix: string }) => x.token_prefix === prefix);
      expect(s).toMatchObject({ device_name: 'Pixel of Ada', device_id: 'ada-1', online: true, transport: 'Plain (on tailscale)' });
      expect(s.connections).toHaveLength(1);
      expect(s.grants.chat).toBeDefined();
      phone.close();
    });

    it('revoke: closes the phone socket, appends session.revoked by operator', async () => {
      const { phone, prefix } = await pairPhone(relay);
      const res = await post(`/sessions/${prefix}/revoke`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, revoked: prefix, revoked_self: false });
      expect(await phone.closed).toBe(CLOSE.revoked);
      const e = readEvents(relay.home)
        .filter((x) => x.type === 'session.revoked')
        .at(-1)!;
      expect(e).toMatchObject({ actor: 'operator', data: { tokenPrefix: prefix, by: 'operator' } });
      expect((await post(`/sessions/${prefix}/revoke`)).status).toBe(404);
      expect((await post('/sessions/ab/revoke')).status).toBe(400);
    });

    it('shorten: reduces lifetime and drops a grant; extending is refused', async () => {
      const { phone, prefix } = await pairPhone(relay, { terms: { ttl_seconds: 7 * 86400 } });
      const res = await post(`/sessions/${prefix}/shorten`, { ttl_seconds: 3600, grants: { terminal: false } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.expires_at).toBe(Math.floor(relay.clock.now().getTime() / 1000) + 3600);
      expect(body.grants.terminal).toBeUndefined();
      const e = readEvents(relay.home)
        .filter((x) => x.type === 'session.shortened')
        .at(-1)!;
      expect(e.actor).toBe('operator');
      const ext = await post(`/sessions/${prefix}/shorten`, { ttl_seconds: 30 * 86400 });
      expect(ext.status).toBe(422);
      expect(await ext.json()).toMatchObject({ ok: false, code: 'reduction_only' });
      const bad = await post(`/sessions/${prefix}/shorten`, { ttl_seconds: 'soon' });
      expect(bad.status).toBe(400);
      phone.close();
    });

    it('pairing: mint returns a code and URL; the list shows codes by reference only; approve and deny pending requests', async () => {
      const minted = (await (await post('/pairing/mint', { ttl_seconds: 86400 })).json()) as Json;
      expect(minted).toMatchObject({ ok: true });
      expect(minted.code).toMatch(/^[A-Z0-9]{6}$/);
      expect(minted.pairing_url).toMatch(/^svc-relay:\/\/pair\?payload=/);
      expect(minted.code_ref).toMatch(/^[A-Za-z0-9_-]{8}$/);

      const r1 = (await (
        await fetch(`${relay.url}/pairing`, { method: 'POST', headers: json, body: JSON.stringify({ device_name: 'Guest tablet' }) })
      ).json()) as Json;
      const r2 = (await (
        await fetch(`${relay.url}/pairing`, { method: 'POST', headers: json, body: JSON.stringify({ device_name: 'Unknown' }) })
      ).json()) as Json;
      const listText = await (await fetch(`${api}/pairing`)).text();
      expect(listText).not.toContain(minted.code);
      expect(listText).not.toContain(r1.code);
      const list = JSON.parse(listText);
      expect(list.ready.map((c: { code_ref: string }) => c.code_ref)).toContain(minted.code_ref);
      expect(list.pending.map((c: { request_id: string }) => c.request_id).sort()).toEqual([r1.request_id, r2.request_id].sort());
      expect(list.pending.find((c: { request_id: string }) => c.request_id === r1.request_id)).toMatchObject({
        device_name: 'Guest tablet',
        ip: '127.0.0.1',
      });

      expect((await post('/pairing/approve', { request_id: r1.request_id, ttl_seconds: 86400 })).status).toBe(200);
      expect((await post('/pairing/deny', { request_id: r2.request_id })).status).toBe(200);
      expect((await post('/pairing/deny', { request_id: r2.request_id })).status).toBe(404);
      expect((await post('/pairing/approve', { request_id: 'nope' })).status).toBe(400);
      const events = readEvents(relay.home);
      expect(events.find((e) => e.type === 'pairing.approved' && e.data.requestId === r1.request_id)?.actor).toBe('operator');
      expect(events.find((e) => e.type === 'pairing.denied' && e.data.requestId === r2.request_id)?.actor).toBe('operator');
      const after = (await (await fetch(`${api}/pairing`)).json()) as Json;
      expect(after.pending).toHaveLength(0);
    });
  });

  describe('event log', () => {
    it('pages newest first and oldest first from a seq, with type and device filters', async () => {
      const { phone, prefix } = await pairPhone(relay);
      await relay.loop.drain();
      const all = readEvents(relay.home);
      const head = all.at(-1)!.seq;
      const desc = (await (await fetch(`${api}/events?limit=3`)).json()) as Json;
      expect(desc.events.map((e: { seq: number }) => e.seq)).toEqual([head, head - 1, head - 2]);
      expect(desc.next).toEqual({ before: head - 2 });
      const older = (await (await fetch(`${api}/events?limit=3&before=${head - 2}`)).json()) as Json;
      expect(older.events.map((e: { seq: number }) => e.seq)).toEqual([head - 3, head - 4, head - 5]);
      const asc = (await (await fetch(`${api}/events?after=2&limit=4`)).json()) as Json;
      expect(asc.events.map((e: { seq: number }) => e.seq)).toEqual([3, 4, 5, 6]);
      const full = (await (await fetch(`${api}/events?after=0&limit=1000`)).json()) as Json;
      expect(full.events.map((e: { seq: number }) => e.seq)).toEqual(all.map((e) => e.seq));

      const sessionsOnly = (await (await fetch(`${api}/events?type=session.&limit=1000`)).json()) as Json;
      expect(sessionsOnly.events.length).toBe(all.filter((e) => e.type.startsWith('session.')).length);
      const mine = (await (await fetch(`${api}/events?device=${prefix}&limit=1000`)).json()) as Json;
      expect(mine.events.length).toBeGreaterThan(0);
      for (const e of mine.events) expect(JSON.stringify(e)).toContain(prefix);
      const none = (await (await fetch(`${api}/events?since=${encodeURIComponent('2030-01-01T00:00:00Z')}`)).json()) as Json;
      expect(none.events).toEqual([]);
      expect((await fetch(`${api}/events?after=x`)).status).toBe(400);
      expect((await fetch(`${api}/events?limit=5000`)).status).toBe(400);
      const refusals: Array<[string, string, string]> = [
        ['after=x', 'validation.query', 'after must be a whole number'],
        ['after=-1', 'validation.query', 'after must be a whole number'],
        ['limit=5000', 'validation.query', 'limit must be between 1 and 1000'],
        ['limit=0', 'validation.query', 'limit must be between 1 and 1000'],
        ['before=0', 'validation.query', 'before must be between 1 and 9007199254740991'],
        ['limit=1&limit=2', 'validation.query', 'limit must be a whole number'],
        ['since=yesterday', 'validation.query', 'since: epoch seconds or an ISO time'],
        ['until=x', 'validation.query', 'until: epoch seconds or an ISO time'],
        ['after=1&before=2', 'validation.events_cursor', 'give after or before, not both'],
        [`device=${'d'.repeat(65)}`, 'validation.device', 'device: at most 64 characters'],
      ];
      for (const [query, code, error] of refusals) {
        const res = await fetch(`${api}/events?${query}`);
        expect([query, res.status, await res.json()]).toEqual([query, 400, { ok: false, code, error }]);
      }
      for (const query of [
        'limit=',
        'after=',
        'since=',
        `since=${Math.floor(Date.now() / 1000) - 60}&until=${encodeURIComponent('2100-01-01T00:00:00Z')}`,
      ])
        expect([query, (await fetch(`${api}/events?${query}`)).status]).toEqual([query, 200]);
      phone.close();
    });

    it('never shows a digest in full, a token or a code', async () => {
      const { phone, token } = await pairPhone(relay);
      const minted = (await (await post('/pairing/mint')).json()) as Json;
      await relay.loop.drain();
      const digests = readEvents(relay.home).flatMap((e) =>
        Object.entries(e.data)
          .filter(([k]) => /digest$/i.test(k))
          .map(([, v]) => String(v)),
      );
      expect(digests.length).toBeGreaterThan(2);
      const text = (await (await fetch(`${api}/events?limit=1000`)).text()) + (await (await fetch(`${api}/overview`)).text());
      for (const d of digests) expect(text).not.toContain(d);
      expect(text).toContain(`${digests[0].slice(0, 8)}…`);
      expect(text).not.toContain(token);
      expect(text).not.toContain(`"${minted.code}"`);
      phone.close();
    });
  });

  describe('stream', () => {
    it('replays after ?after=, then goes live; a reconnect with Last-Event-ID misses and doubles nothing', async () => {
      await relay.loop.drain();
      const start = relay.loop.lastSeq;
      const first = await SseClient.open(`${api}/stream?after=${start - 3}`, relay.op);
      expect(first.status).toBe(200);
      await first.until((c) => c.events().length >= 3);
      expect(first.events().map((e) => e.seq)).toEqual([start - 2, start - 1, start]);
      const hello = first.messages.find((m) => m.event === 'hello')!;
      expect(JSON.parse(hello.data)).toMatchObject({ last_seq: start, from: start - 3 });

      const { phone, prefix } = await pairPhone(relay);
      await first.until((c) => c.events().some((e) => e.type === 'session.created'));
      const lastSeen = Number(first.messages.filter((m) => m.id).at(-1)!.id);
      first.close();

      // Events the console missed while away.
      await post(`/sessions/${prefix}/revoke`);
      await phone.closed;
      await relay.loop.drain();
      const second = await SseClient.open(`${api}/stream`, { ...relay.op, 'last-event-id': String(lastSeen) });
      await second.until((c) => c.events().some((e) => e.type === 'phone.disconnected'));
      await pairPhone(relay).then((p) => p.phone.close());
      await second.until((c) => c.events().filter((e) => e.type === 'session.created').length === 1);
      await relay.loop.drain();
      await second.until((c) => c.events().at(-1)!.seq === relay.loop.lastSeq);
      const seqs = [...first.events(), ...second.events()].map((e) => e.seq);
      const expected = readEvents(relay.home)
        .map((e) => e.seq)
        .filter((s) => s > start - 3);
      expect(seqs).toEqual(expected);
      second.close();
    });

    it('starts live when given no seq, sends heartbeats, and never sends a secret', async () => {
      const c = await SseClient.open(`${api}/stream`, relay.op);
      await c.until((x) => x.messages.some((m) => m.event === 'hello'));
      expect(c.events()).toEqual([]);
      const { phone, token } = await pairPhone(relay);
      await c.until((x) => x.events().some((e) => e.type === 'session.created'));
      expect(JSON.stringify(c.messages)).not.toContain(token);
      const created = c.events().find((e) => e.type === 'session.created')!;
      expect(created.data.tokenDigest).toMatch(/^[A-Za-z0-9_-]{8}…$/);
      await c.until((x) => x.comments >= 2, 2000);
      c.close();
      phone.close();
    });

    it('refuses a malformed Last-Event-ID', async () => {
      const res = await fetch(`${api}/stream`, { headers: { 'last-event-id': 'abc' } });
      expect(res.status).toBe(400);
    });
  });

  describe('the app', () => {
    it('serves index.html for client routes with a strict CSP, and hashed assets with a long cache', async () => {
      const redirect = await fetch(`${relay.url}/console`, { redirect: 'manual' });
      expect(redirect.status).toBe(308);
      expect(redirect.headers.get('location')).toBe('/console/');
      for (const p of ['/console/', '/console/devices', '/console/events?type=session.']) {
        const res = await fetch(`${relay.url}${p}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('text/html');
        expect(res.headers.get('cache-control')).toBe('no-cache');
        expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
        expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      }
      const asset = await fetch(`${relay.url}/console/assets/app-1a2b3c.js`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toContain('text/javascript');
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await fetch(`${relay.url}/console/assets/missing.js`)).status).toBe(404);
      for (const up of ['..%2f', '..%2f..%2f', '%2e%2e/', '%2e%2e/%2e%2e/', '..%5c']) {
        const res = await fetch(`${relay.url}/console/${up}svc-console-outside.txt`);
        expect(res.status).toBe(404);
        expect(await res.text()).not.toContain('outside');
      }
      const unknown = await fetch(`${api}/nope`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ ok: false });
    });
  });
});

describe('console chain status', () => {
  it('reports a tampered log as broken at the edited seq', async () => {
    const relay = await startRelay();
    try {
      await pairPhone(relay).then((p) => p.phone.close());
      await relay.loop.drain();
      const ok = (await (await fetch(`${relay.url}/console/api/overview`)).json()) as Json;
      expect(ok.chain.state).toBe('verified');
      const dir = path.join(relay.home, 'relay', 'events');
      const file = path.join(dir, fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'))[0]);
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      lines[2] = lines[2].replace('"actor":"', '"actor":"x');
      fs.writeFileSync(file, lines.join('\n'));
      const res = await fetch(`${relay.url}/console/api/chain/verify`, { method: 'POST', headers: json, body: '{}' });
      const body = (await res.json()) as Json;
      expect(body.chain).toMatchObject({ state: 'broken', broken_at_seq: 3 });
    } finally {
      await relay.close();
    }
  });

  it('says how to build the console when it is not built', async () => {
    const relay = await startRelay({ env: { RELAY_CONSOLE_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'svc-console-empty-')) } });
    try {
      const res = await fetch(`${relay.url}/console/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build:console');
    } finally {
      await relay.close();
    }
  });
});
