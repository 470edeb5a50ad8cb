import * as path from 'node:path';
import { Secrets } from '../../apps/relay/src/common/auth/secrets';
import { canonicalJson, decodePairing, type QrPayload } from '../../apps/relay/src/pairing/qr-payload';
import { bearer, json, nextCode, Phone, pairPhone, readEvents, registerCode, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

const DAY = 86_400;

describe('pairing', () => {
  let relay: TestRelay;
  const now = () => Math.floor(relay.clock.now().getTime() / 1000);
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${relay.url}${url}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeEach(async () => {
    relay = await startRelay();
  });
  afterEach(async () => {
    await relay.close();
  });

  describe('POST /pairing/register and the first system/auth', () => {
    it('registers a code for ten minutes and pairs a phone with it over a real WebSocket', async () => {
      const code = nextCode();
      const res = await registerCode(relay, code);
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ ok: true, code, expires_at: now() + 600 });

      const phone = await Phone.connect(relay.url);
      const ok = await phone.auth({
        pairing_code: code,
        device_name: 'Pixel',
        device_id: 'dev-1',
        device_model: 'Pixel 9',
        device_platform: 'android',
      });
      expect(ok).toMatchObject({ channel: 'system', type: 'auth.ok', id: 'auth-1' });
      const p = ok.payload;
      expect(p.session_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(p).toMatchObject({ server_version: expect.any(String), expires_at: now() + 30 * DAY, transport_hint: 'ws' }); // no hint in the code: the socket's own
      // WIRE.md defaults: chat and voice = session; terminal and tui = 30 d; bridge = 7 d. Desktop only when asked for.
      expect(p.grants).toEqual({
        chat: now() + 30 * DAY,
        terminal: now() + 30 * DAY,
        tui: now() + 30 * DAY,
        bridge: now() + 7 * DAY,
        'voice:config': now() + 30 * DAY,
        'voice:stt': now() + 30 * DAY,
        'voice:tts': now() + 30 * DAY,
        'voice:realtime': now() + 30 * DAY,
      });

      const list = await json(await fetch(`${relay.url}/sessions`, { headers: bearer(p.session_token as string) }));
      expect(list.sessions).toEqual([
        expect.objectContaining({
          token_prefix: (p.session_token as string).slice(0, 8),
          device_name: 'Pixel',
          device_id: 'dev-1',
          is_current: true,
        }),
      ]);

      const types = readEvents(relay.home).map((e) => e.type);
      expect(types).toEqual(expect.arrayContaining(['pairing.code_registered', 'pairing.code_consumed', 'session.created', 'phone.connected']));
      expect(types.indexOf('pairing.code_consumed')).toBeLessThan(types.indexOf('session.created'));
      phone.close();
    });

    it('the desktop grant is opt-in: given only when the code names it (svc relay pair --grants desktop=7d)', async () => {
      const plain = await pairPhone(relay);
      expect('desktop' in (plain.ok.payload.grants as object)).toBe(false);
      const desk = await pairPhone(relay, { terms: { grants: { desktop: '7d' } } });
      expect(desk.ok.payload.grants).toMatchObject({ desktop: now() + 7 * DAY, chat: now() + 30 * DAY, terminal: now() + 30 * DAY });
      plain.phone.close();
      desk.phone.close();
    });

    it('takes ttl_seconds and grants, clamping every grant to the session', async () => {
      const { ok } = await pairPhone(relay, { terms: { ttl_seconds: DAY, grants: { terminal: '30d', bridge: 3600, chat: 'never', tui: false } } });
      expect(ok.payload.expires_at).toBe(now() + DAY);
      const g = ok.payload.grants as Record<string, number | null>;
      expect(g.terminal).toBe(now() + DAY);
      expect(g.bridge).toBe(now() + 3600);
      expect(g.chat).toBe(now() + DAY);
      expect(g.tui).toBeUndefined();
      for (const v of Object.values(g)) expect(v).not.toBeNull();
    });

    it('ttl_seconds 0 makes a session that never expires (null on the wire), grants keep their own bounds', async () => {
      const { ok, token } = await pairPhone(relay, { terms: { ttl_seconds: 0 } });
      expect(ok.payload.expires_at).toBeNull();
      const g = ok.payload.grants as Record<string, number | null>;
      expect(g.chat).toBeNull();
      expect(g.terminal).toBe(now() + 30 * DAY);
      const list = await json(await fetch(`${relay.url}/sessions`, { headers: bearer(token) }));
      expect(list.sessions[0].expires_at).toBeNull();
    });

    it('records the transport hint', async () => {
      const { ok } = await pairPhone(relay, { terms: { transport_hint: 'tailscale' } });
      expect(ok.payload.transport_hint).toBe('tailscale');
    });

    it('accepts a code typed in lower case with spaces around it', async () => {
      const code = nextCode();
      expect((await registerCode(relay, code.toLowerCase())).status).toBe(200);
      const phone = await Phone.connect(relay.url);
      expect((await phone.auth({ pairing_code: ` ${code.toLowerCase()} ` })).type).toBe('auth.ok');
      phone.close();
    });

    it('refuses to register a code that is already live (409), and the first registration still works', async () => {
      const code = nextCode();
      expect((await registerCode(relay, code)).status).toBe(200);
      const again = await registerCode(relay, code, { ttl_seconds: 60 });
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ ok: false, code: 'pairing.code_exists' });
      const { ok } = await pairWith(code);
      expect(ok.payload.expires_at).toBe(now() + 30 * DAY);
    });

    it('a code is one-shot: the second phone is refused and its socket closed', async () => {
      const code = nextCode();
      await registerCode(relay, code);
      const first = await pairWith(code);
      expect(first.ok.type).toBe('auth.ok');
      const second = await Phone.connect(relay.url);
      const fail = await second.auth({ pairing_code: code, device_id: 'other' });
      expect(fail).toMatchObject({
        type: 'auth.fail',
        payload: { code: 'invalid_credentials', code_state: 'used', reason: expect.stringMatching(/^Pairing code already used/) },
      });
      expect(await second.closed).toBe(4401);
      first.phone.close();
    });

    it('two phones racing for one code: exactly one wins', async () => {
      const code = nextCode();
      await registerCode(relay, code);
      const phones = await Promise.all([1, 2, 3, 4].map(() => Phone.connect(relay.url)));
      const results = await Promise.all(phones.map((p, i) => p.auth({ pairing_code: code, device_id: `race-${i}` })));
      expect(results.filter((r) => r.type === 'auth.ok')).toHaveLength(1);
      expect(results.filter((r) => r.type === 'auth.fail')).toHaveLength(3);
      expect(readEvents(relay.home).filter((e) => e.type === 'session.created')).toHaveLength(1);
      for (const p of phones) p.close();
    });

    it('a code expires after ten minutes (and still works one second before)', async () => {
      const early = nextCode();
      const late = nextCode();
      await registerCode(relay, early);
      await registerCode(relay, late);
      relay.clock.advanceSeconds(599);
      await relay.sweep();
      expect((await pairWith(early)).ok.type).toBe('auth.ok');
      relay.clock.advanceSeconds(1);
      await relay.sweep();
      const expired = readEvents(relay.home).filter((e) => e.type === 'pairing.code_expired');
      expect(expired).toHaveLength(1);
      const phone = await Phone.connect(relay.url);
      expect((await phone.auth({ pairing_code: late })).type).toBe('auth.fail');
      expect(await phone.closed).toBe(4401);
    });

    it('an expired code fails even before the sweep writes its expiry', async () => {
      const code = nextCode();
      await registerCode(relay, code);
      relay.clock.advance(600_000); // the manual clock's sweep runs in the background; race it on purpose
      const phone = await Phone.connect(relay.url);
      expect((await phone.auth({ pairing_code: code })).type).toBe('auth.fail');
    });

    it('a code may be registered again once it expired', async () => {
      const code = nextCode();
      await registerCode(relay, code);
      relay.clock.advanceSeconds(601);
      await relay.sweep();
      expect((await registerCode(relay, code)).status).toBe(200);
      expect((await pairWith(code)).ok.type).toBe('auth.ok');
    });

    it('registering an expired code again, before the sweep noticed, answers the new ten-minute expiry', async () => {
      const code = nextCode();
      await registerCode(relay, code);
      relay.clock.advanceSeconds(601);
      const again = await registerCode(relay, code);
      expect(again.status).toBe(200);
      expect((await json(again)).expires_at).toBe(Math.floor(relay.clock.now().getTime() / 1000) + 600);
    });

    it('re-pairing with the same device_id replaces the older session and closes its socket', async () => {
      const a = await pairPhone(relay, { device: { device_id: 'same-device' } });
      const b = await pairPhone(relay, { device: { device_id: 'same-device' } });
      const revoked = await a.phone.type('system', 'session.revoked');
      expect(revoked.payload).toMatchObject({ reason: 'replaced', revoked_self: false });
      expect(await a.phone.closed).toBe(4403);
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(401);
      const list = await json(await fetch(`${relay.url}/sessions`, { headers: bearer(b.token) }));
      expect(list.sessions.map((s: { token_prefix: string }) => s.token_prefix)).toEqual([b.prefix]);
      b.phone.close();
    });

    it('an empty device_id does not replace anyone', async () => {
      const a = await pairPhone(relay, { device: { device_id: '' } });
      const b = await pairPhone(relay, { device: { device_id: '' } });
      const list = await json(await fetch(`${relay.url}/sessions`, { headers: bearer(b.token) }));
      expect(list.sessions).toHaveLength(2);
      a.phone.close();
      b.phone.close();
    });
  });

  describe('POST /pairing/mint', () => {
    it('returns a signed QR payload whose sig verifies, and a svc-relay:// URL that carries it', async () => {
      const res = await post('/pairing/mint', {
        ttl_seconds: 7 * DAY,
        grants: { terminal: '1d', bridge: '1h' },
        dashboard_url: 'http://127.0.0.1:9119',
      });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body).toMatchObject({
        ok: true,
        code: expect.stringMatching(/^[A-Z0-9]{6}$/),
        expires_at: now() + 600,
        relay_url: expect.stringMatching(/^ws:\/\//),
        dashboard_url: 'http://127.0.0.1:9119',
        pairing_url: expect.stringMatching(/^svc-relay:\/\/pair\?payload=[A-Za-z0-9_-]+$/),
      });
      expect(typeof body.qr_payload).toBe('string'); // the host json.loads it (plugin/pair.py mint_relay_pairing)
      const payload = JSON.parse(body.qr_payload as string) as QrPayload;
      expect(payload).toMatchObject({
        svc: 2, // the version key in the spelling in force
        host: expect.any(String),
        port: 8642,
        key: '', // no API server configured
        tls: false,
        relay: { url: body.relay_url, code: body.code, ttl_seconds: 7 * DAY },
        dashboard_url: 'http://127.0.0.1:9119',
      });
      expect(payload.relay.grants).toMatchObject({ terminal: DAY, bridge: 3600 });
      expect(decodePairing(body.pairing_url)).toEqual(payload);
      expect(decodePairing(body.qr_payload)).toEqual(payload);

      const secrets = Secrets.load(path.join(relay.home, 'relay'));
      const { sig, ...unsigned } = payload;
      const mac = (v: unknown) => Buffer.from(secrets.mac('qr', canonicalJson(v)), 'base64url').toString('base64');
      expect(sig).toBe(mac(unsigned));
      // Any edit breaks it.
      const forged = { ...unsigned, relay: { ...unsigned.relay, url: 'ws://evil.example.com:8767' } };
      expect(mac(forged)).not.toBe(sig);

      const { ok } = await pairWith(body.code);
      expect(ok.payload.expires_at).toBe(now() + 7 * DAY);
      expect((ok.payload.grants as Record<string, number>).bridge).toBe(now() + 3600);
    });

    it('with no body mints a default code (30 days)', async () => {
      const res = await fetch(`${relay.url}/pairing/mint`, { method: 'POST' });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect((JSON.parse(body.qr_payload as string) as QrPayload).relay.ttl_seconds).toBeUndefined();
      expect((await pairWith(body.code)).ok.payload.expires_at).toBe(now() + 30 * DAY);
    });

    it('carries the API server credentials when the API server is on, and the request key wins', async () => {
      await relay.close();
      relay = await startRelay({ env: { API_SERVER_KEY: 'configured-key-123', API_SERVER_PORT: '8642' } });
      const a = await json(await post('/pairing/mint', {}));
      expect(JSON.parse(a.qr_payload as string)).toMatchObject({ port: 8642, key: 'configured-key-123', tls: false });
      const b = await json(await post('/pairing/mint', { api_key: 'from-request-456' }));
      expect(JSON.parse(b.qr_payload as string).key).toBe('from-request-456');
      // The key never reaches the log lines or the event log.
      await relay.loop.drain();
      const events = JSON.stringify(readEvents(relay.home));
      for (const k of ['configured-key-123', 'from-request-456']) {
        expect(events.includes(k)).toBe(false);
        expect(relay.logs.join('\n').includes(k)).toBe(false);
      }
    });

    it('every minted code is distinct', async () => {
      const codes = new Set<string>();
      for (let i = 0; i < 20; i++) codes.add((await json(await post('/pairing/mint', {}))).code);
      expect(codes.size).toBe(20);
    });
  });

  describe('public POST /pairing: pending until the operator approves', () => {
    const publicRequest = (ip: string, body: Record<string, unknown> = {}) =>
      relay.app.inject({ method: 'POST', url: '/pairing', remoteAddress: ip, payload: body });

    it('creates a pending code that fails auth until approved, then pairs', async () => {
      const res = await publicRequest('10.1.1.1', { device_name: 'Kitchen tablet' });
      expect(res.statusCode).toBe(200);
      const req = JSON.parse(res.body);
      expect(req).toMatchObject({
        ok: true,
        code: expect.stringMatching(/^[A-Z0-9]{6}$/),
        request_id: expect.any(String),
        status: 'pending',
        expires_at: now() + 600,
      });

      const early = await Phone.connect(relay.url);
      const fail = await early.auth({ pairing_code: req.code });
      expect(fail).toMatchObject({ type: 'auth.fail', payload: { code: 'pending_approval' } });
      expect(await early.closed).toBe(4401);

      const pending = await json(await fetch(`${relay.url}/pairing/pending`));
      expect(pending.codes).toEqual([
        expect.objectContaining({ request_id: req.request_id, state: 'pending', source: 'public', ip: '10.1.1.1', device_name: 'Kitchen tablet' }),
      ]);
      expect(JSON.stringify(pending).includes(req.code)).toBe(false);

      const approve = await post('/pairing/approve', { request_id: req.request_id, ttl_seconds: DAY, grants: { terminal: false } });
      expect(approve.status).toBe(200);
      expect(await json(approve)).toEqual({ ok: true, request_id: req.request_id, status: 'approved' });

      const { ok } = await pairWith(req.code);
      expect(ok.payload.expires_at).toBe(now() + DAY);
      expect((ok.payload.grants as Record<string, unknown>).terminal).toBeUndefined();
      const types = readEvents(relay.home).map((e) => e.type);
      expect(types).toEqual(expect.arrayContaining(['pairing.requested', 'pairing.approved', 'pairing.code_consumed']));
    });

    it('approve by code works too; approving twice is a 409', async () => {
      const req = JSON.parse((await publicRequest('10.1.1.2')).body);
      expect((await post('/pairing/approve', { code: req.code })).status).toBe(200);
      const again = await post('/pairing/approve', { code: req.code });
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ ok: false, code: 'pairing.not_pending' });
    });

    it('a denied request never works', async () => {
      const req = JSON.parse((await publicRequest('10.1.1.3')).body);
      const deny = await post('/pairing/deny', { request_id: req.request_id });
      expect(deny.status).toBe(200);
      expect(await json(deny)).toEqual({ ok: true, request_id: req.request_id, status: 'denied' });
      const phone = await Phone.connect(relay.url);
      expect(await phone.auth({ pairing_code: req.code })).toMatchObject({ type: 'auth.fail', payload: { code: 'invalid_credentials' } });
      expect((await post('/pairing/approve', { request_id: req.request_id })).status).toBe(404);
      expect((await fetch(`${relay.url}/pairing/pending`).then(json)).codes).toEqual([]);
    });

    it('an unapproved request expires after ten minutes and cannot be approved after', async () => {
      const req = JSON.parse((await publicRequest('10.1.1.4')).body);
      relay.clock.advanceSeconds(600);
      await relay.sweep();
      const res = await post('/pairing/approve', { request_id: req.request_id });
      expect(res.status).toBe(404);
      expect(await json(res)).toMatchObject({ code: 'pairing.not_found' });
      const expired = readEvents(relay.home).filter((e) => e.type === 'pairing.code_expired');
      expect(expired).toEqual([expect.objectContaining({ data: expect.objectContaining({ requestId: req.request_id }) })]);
    });

    it('a host code cannot be "approved" (it is already usable): 409', async () => {
      const code = nextCode();
      await registerCode(relay, code);
      expect((await post('/pairing/approve', { code })).status).toBe(409);
    });

    it('at most 5 pending requests per address (429 with Retry-After), others unaffected', async () => {
      for (let i = 0; i < 5; i++) expect((await publicRequest('10.2.2.2')).statusCode).toBe(200);
      const sixth = await publicRequest('10.2.2.2');
      expect(sixth.statusCode).toBe(429);
      expect(sixth.headers['retry-after']).toBeDefined();
      expect(JSON.parse(sixth.body)).toMatchObject({ ok: false, code: 'pairing.too_many_requests' });
      expect((await publicRequest('10.2.2.3')).statusCode).toBe(200);
    });
  });

  it('RELAY_PAIRING_CODE pre-registers a code at start, and the code never appears in the logs', async () => {
    await relay.close();
    relay = await startRelay({ env: { RELAY_PAIRING_CODE: 'ENV123' } });
    const { ok } = await pairWith('ENV123');
    expect(ok.type).toBe('auth.ok');
    expect(readEvents(relay.home).find((e) => e.type === 'pairing.code_registered')?.data.source).toBe('env');
    expect(relay.logs.join('\n').includes('ENV123')).toBe(false);
  });

  async function pairWith(code: string) {
    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth({ pairing_code: code, device_id: `dev-${code}-${Math.random()}` });
    if (ok.type !== 'auth.ok') throw new Error(`auth failed: ${JSON.stringify(ok)}`);
    phone.close();
    return { phone, ok };
  }
});
