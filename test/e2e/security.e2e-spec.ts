import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { InjectOptions } from 'fastify';
import { bearer, json, nextCode, Phone, pairPhone, registerCode, startRelay, type TestRelay } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/**
 * The edges of the spine: who may call what (loopback, proxy headers, Host, Origin), what a malformed
 * request gets (a clean 4xx JSON body and no event), and that no secret ever reaches the logs or the log.
 */
describe('security', () => {
  let relay: TestRelay;
  let token: string;
  let prefix: string;
  let phone: Phone;

  beforeAll(async () => {
    relay = await startRelay();
    ({ phone, token, prefix } = await pairPhone(relay));
  });
  afterAll(async () => {
    phone.close();
    await relay.close();
  });

  /** As the operator's tools call: with the home's operator key (the key's own refusals: test/e2e/operator-key). */
  const inject = (o: InjectOptions) => relay.app.inject({ ...o, headers: { ...relay.op, ...(o.headers as Record<string, string> | undefined) } });

  /** Every loopback-only route, with a body that would succeed from the operator. */
  const LOOPBACK_ROUTES: Array<{ method: 'GET' | 'POST'; url: string; payload?: Record<string, unknown> }> = [
    { method: 'POST', url: '/pairing/register', payload: { code: 'LOOP01' } },
    { method: 'POST', url: '/pairing/mint', payload: {} },
    { method: 'POST', url: '/pairing/approve', payload: { code: 'LOOP02' } },
    { method: 'POST', url: '/pairing/deny', payload: { code: 'LOOP03' } },
    { method: 'GET', url: '/pairing/pending' },
  ];

  /** Runs `fn` and asserts it wrote nothing to the event log. */
  async function noEvent<T>(fn: () => Promise<T>): Promise<T> {
    await relay.loop.drain();
    const before = relay.loop.lastSeq;
    const out = await fn();
    await relay.loop.drain();
    expect(relay.loop.lastSeq).toBe(before);
    return out;
  }

  function expectErrorBody(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code?: string | RegExp) {
    expect(res.statusCode).toBe(status);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    const body = JSON.parse(res.body) as { ok: unknown; error: unknown; code: unknown };
    expect(body.ok).toBe(false);
    expect(typeof body.error).toBe('string');
    expect((body.error as string).length).toBeGreaterThan(0);
    expect(typeof body.code).toBe('string');
    if (code !== undefined) expect(body.code).toEqual(code instanceof RegExp ? expect.stringMatching(code) : code);
    return body;
  }

  describe('loopback routes', () => {
    it('answer the operator on loopback (the positive control)', async () => {
      const res = await inject({ method: 'GET', url: '/pairing/pending' });
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ ok: true, codes: expect.any(Array) });
    });

    it.each(LOOPBACK_ROUTES)('$method $url is refused from a non-loopback peer with 403 and no event', async (r) => {
      const res = await noEvent(() => inject({ ...r, remoteAddress: '10.0.0.9' }));
      expectErrorBody(res, 403, 'auth.loopback_only');
    });

    it.each(LOOPBACK_ROUTES)('$method $url is refused from a non-loopback peer even with a valid session bearer', async (r) => {
      const res = await noEvent(() => inject({ ...r, remoteAddress: '192.168.1.20', headers: bearer(token) }));
      expectErrorBody(res, 403, 'auth.loopback_only');
    });

    const PROXY_HEADERS: Array<[string, string]> = [
      ['x-forwarded-for', '203.0.113.7'],
      ['forwarded', 'for=203.0.113.7'],
      ['x-real-ip', '203.0.113.7'],
      ['x-forwarded-host', 'relay.example.com'],
      ['x-forwarded-proto', 'https'],
    ];
    for (const [header, value] of PROXY_HEADERS) {
      it.each(LOOPBACK_ROUTES)(`$method $url is refused from loopback with a ${header} header`, async (r) => {
        const res = await noEvent(() => inject({ ...r, headers: { [header]: value } }));
        expectErrorBody(res, 403, 'auth.loopback_only');
      });
    }

    it.each(['evil.example.com', 'evil.example.com:80', '10.0.0.9', '127.0.0.1.nip.io', 'localhost.evil.com'])(
      'refuses a foreign Host header %s (DNS rebinding)',
      async (host) => {
        for (const r of LOOPBACK_ROUTES) {
          const res = await noEvent(() => inject({ ...r, headers: { host } }));
          expectErrorBody(res, 403, 'auth.loopback_only');
        }
      },
    );

    it.each(['localhost', `localhost:1234`, '127.0.0.1:9', '[::1]:80'])('accepts the loopback Host %s', async (host) => {
      const res = await inject({ method: 'GET', url: '/pairing/pending', headers: { host } });
      expect(res.statusCode).toBe(200);
    });

    it.each(['http://evil.example.com', 'null', 'http://127.0.0.1:1', 'https://localhost.evil.com', 'file://'])(
      'refuses a foreign Origin %s',
      async (origin) => {
        for (const r of LOOPBACK_ROUTES) {
          const res = await noEvent(() => inject({ ...r, headers: { origin } }));
          expectErrorBody(res, 403, 'auth.loopback_only');
        }
      },
    );

    it('accepts its own loopback Origin', async () => {
      const res = await inject({ method: 'GET', url: '/pairing/pending', headers: { origin: `http://127.0.0.1:${relay.port}` } });
      expect(res.statusCode).toBe(200);
    });

    it('refuses a real request carrying a proxy header over TCP', async () => {
      const res = await fetch(`${relay.url}/pairing/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '8.8.8.8' },
        body: JSON.stringify({ code: nextCode() }),
      });
      expect(res.status).toBe(403);
      expect(await json(res)).toMatchObject({ ok: false, code: 'auth.loopback_only' });
    });
  });

  describe('paired and public routes from outside', () => {
    it('GET /health is public and holds nothing secret', async () => {
      const res = await inject({ method: 'GET', url: '/health', remoteAddress: '10.0.0.9' });
      expect(res.statusCode).toBe(200);
      const body = JSON.parse(res.body);
      expect(body).toEqual({
        status: 'ok',
        version: expect.any(String),
        clients: expect.any(Number),
        sessions: expect.any(Number),
        // Which brand the relay writes (RELAY_CLIENT_SPELLING): public, so clients and the doctor can tell.
        client_spelling: 'svc',
        // Spec 4.1/4.11: Secure Link's state (off here); with it on, its public pin and certificate.
        secure_link: expect.objectContaining({ enabled: false, status: 'disabled', reach: expect.objectContaining({ state: 'disabled' }) }),
        // Whether the relay takes work (the disk guard); its figures only to loopback.
        disk: { low: false },
        // Whether shells are recorded (RELAY_TERMINAL_RECORDING, off by default): a phone's user may ask.
        terminal_recording: false,
      });
    });

    it('GET /sessions from a remote peer needs the bearer (401) and works with it', async () => {
      expectErrorBody(await inject({ method: 'GET', url: '/sessions', remoteAddress: '10.0.0.9' }), 401, 'auth.missing_bearer');
      const ok = await inject({ method: 'GET', url: '/sessions', remoteAddress: '10.0.0.9', headers: bearer(token) });
      expect(ok.statusCode).toBe(200);
    });

    it('a loopback caller gets no operator power on paired routes: /sessions still needs a bearer', async () => {
      const res = await noEvent(() => inject({ method: 'GET', url: '/sessions' }));
      expectErrorBody(res, 401, 'auth.missing_bearer');
    });

    it.each(['Bearer', 'Bearer ', 'Basic abc', `Token ${'x'.repeat(40)}`, 'Bearerxyz0123456789abcdef'])(
      'no bearer credential in %p: 401 auth.missing_bearer ("send the token"), not a crash',
      async (authorization) => {
        const res = await inject({ method: 'GET', url: '/sessions', remoteAddress: '10.0.0.50', headers: { authorization } });
        expectErrorBody(res, 401, 'auth.missing_bearer');
      },
    );

    it.each([
      'Bearer wrongtoken123',
      'Bearer short',
      'bearer a b c d e f g h i j k l m n o p',
      `Bearer ${'x'.repeat(600)}`,
      'Bearer bad!chars-0123456789',
    ])('a bearer that is not a valid token (%p) is a wrong token: 401 auth.invalid_token, counted', async (authorization) => {
      const res = await inject({ method: 'GET', url: '/sessions', remoteAddress: '10.0.0.51', headers: { authorization } });
      expectErrorBody(res, 401, 'auth.invalid_token');
    });

    it('unknown routes answer 404 in the error shape', async () => {
      expectErrorBody(await inject({ method: 'GET', url: '/nope' }), 404, 'not_found');
      expectErrorBody(await inject({ method: 'POST', url: '/sessions' }), 404, 'not_found');
    });
  });

  describe('bad input: clean 4xx and no event', () => {
    const JSON_TYPE = { 'content-type': 'application/json' };
    const BAD: Array<[string, InjectOptions, number, string | RegExp]> = [
      ['bad JSON', { method: 'POST', url: '/pairing/register', headers: JSON_TYPE, payload: '{"code":' }, 400, 'bad_json'],
      ['empty JSON body', { method: 'POST', url: '/pairing/register', headers: JSON_TYPE, payload: '' }, 400, /bad_json|validation/],
      ['JSON null', { method: 'POST', url: '/pairing/register', headers: JSON_TYPE, payload: 'null' }, 400, /validation/],
      ['JSON array', { method: 'POST', url: '/pairing/register', headers: JSON_TYPE, payload: '[{"code":"ABCDEF"}]' }, 400, /validation/],
      ['JSON string', { method: 'POST', url: '/pairing/register', headers: JSON_TYPE, payload: '"ABCDEF"' }, 400, /validation/],
      ['JSON number', { method: 'POST', url: '/pairing/register', headers: JSON_TYPE, payload: '42' }, 400, /validation/],
      ['no body', { method: 'POST', url: '/pairing/register' }, 400, /validation/],
      ['code a number', { method: 'POST', url: '/pairing/register', payload: { code: 123456 } }, 400, /validation/],
      ['code too short', { method: 'POST', url: '/pairing/register', payload: { code: 'ABC' } }, 400, /validation/],
      ['code bad characters', { method: 'POST', url: '/pairing/register', payload: { code: 'AB-12!' } }, 400, 'validation.code'],
      ['ttl_seconds a string', { method: 'POST', url: '/pairing/register', payload: { code: 'BADTTL', ttl_seconds: '7d' } }, 400, /validation/],
      ['ttl_seconds negative', { method: 'POST', url: '/pairing/register', payload: { code: 'BADTTL', ttl_seconds: -5 } }, 400, /validation/],
      ['ttl_seconds fractional', { method: 'POST', url: '/pairing/register', payload: { code: 'BADTTL', ttl_seconds: 1.5 } }, 400, /validation/],
      ['ttl_seconds huge', { method: 'POST', url: '/pairing/register', payload: { code: 'BADTTL', ttl_seconds: 1e12 } }, 400, /validation/],
      ['grants an array', { method: 'POST', url: '/pairing/register', payload: { code: 'BADGRT', grants: ['chat'] } }, 400, /validation/],
      ['grants a string', { method: 'POST', url: '/pairing/register', payload: { code: 'BADGRT', grants: 'chat=1d' } }, 400, /validation/],
      [
        'grants unknown channel',
        { method: 'POST', url: '/pairing/register', payload: { code: 'BADGRT', grants: { shell: '1d' } } },
        400,
        'validation.grant_channel',
      ],
      [
        'grant value an object',
        { method: 'POST', url: '/pairing/register', payload: { code: 'BADGRT', grants: { chat: { d: 1 } } } },
        400,
        'validation.grant',
      ],
      [
        'grant value gibberish',
        { method: 'POST', url: '/pairing/register', payload: { code: 'BADGRT', grants: { chat: 'soon' } } },
        400,
        'validation.duration',
      ],
      ['transport_hint a number', { method: 'POST', url: '/pairing/register', payload: { code: 'BADHNT', transport_hint: 5 } }, 400, /validation/],
      [
        'transport_hint with spaces',
        { method: 'POST', url: '/pairing/register', payload: { code: 'BADHNT', transport_hint: 'a b' } },
        400,
        'validation.transport_hint',
      ],
      [
        'mint dashboard_url not a URL',
        { method: 'POST', url: '/pairing/mint', payload: { dashboard_url: 'javascript:alert(1)' } },
        400,
        /validation/,
      ],
      ['mint relay_url http', { method: 'POST', url: '/pairing/mint', payload: { relay_url: 'http://x' } }, 400, /validation/],
      ['approve without a reference', { method: 'POST', url: '/pairing/approve', payload: {} }, 400, 'validation.missing_ref'],
      ['approve JSON null', { method: 'POST', url: '/pairing/approve', headers: JSON_TYPE, payload: 'null' }, 400, /validation/],
      ['approve JSON array', { method: 'POST', url: '/pairing/approve', headers: JSON_TYPE, payload: '[]' }, 400, /validation/],
      ['approve bad request_id', { method: 'POST', url: '/pairing/approve', payload: { request_id: 'x' } }, 400, /validation/],
      ['approve unknown code', { method: 'POST', url: '/pairing/approve', payload: { code: 'ZZZZZZ' } }, 404, 'pairing.not_found'],
      ['deny quiet a string', { method: 'POST', url: '/pairing/deny', payload: { code: 'ZZZZZZ', quiet: 'yes' } }, 400, /validation/],
      ['public pairing array', { method: 'POST', url: '/pairing', remoteAddress: '10.0.0.77', payload: [1] as never }, 400, /validation/],
      [
        'public pairing device_name a number',
        { method: 'POST', url: '/pairing', remoteAddress: '10.0.0.77', payload: { device_name: 7 } },
        400,
        /validation/,
      ],
      [
        'public pairing device_name too long',
        { method: 'POST', url: '/pairing', remoteAddress: '10.0.0.77', payload: { device_name: 'x'.repeat(65) } },
        400,
        /validation/,
      ],
    ];
    it.each(BAD)('%s', async (_label, req, status, code) => {
      const res = await noEvent(() => inject(req));
      expectErrorBody(res, status, code);
    });

    it.each([
      ['text/plain', 'code=ABCDEF'],
      ['application/x-www-form-urlencoded', 'code=FORM01'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="code"\r\n\r\nFORM02\r\n--x--'],
      ['application/xml', '<code>ABCDEF</code>'],
    ])('a %s body on a loopback route is refused with 415', async (type, payload) => {
      const res = await noEvent(() => inject({ method: 'POST', url: '/pairing/register', headers: { 'content-type': type }, payload }));
      expectErrorBody(res, 415, 'unsupported_media_type');
    });

    it('a body without a Content-Type on a loopback route is refused with 415 before it is parsed', async () => {
      const payload = Buffer.from(JSON.stringify({ code: 'NOTYPE' }));
      for (const method of ['POST', 'DELETE'] as const) {
        const res = await noEvent(() => inject({ method, url: method === 'POST' ? '/pairing/register' : '/clipboard/inbox', payload }));
        expectErrorBody(res, 415, 'unsupported_media_type');
      }
    });

    it('a request with neither body nor Content-Type passes on a loopback route (the desktop CLI and host tools send them)', async () => {
      const res = await noEvent(() => inject({ method: 'POST', url: '/media/nosuchtoken00/sensitive' }));
      expect(res.statusCode).not.toBe(415);
      const cleared = await inject({ method: 'DELETE', url: '/clipboard/inbox' });
      expect(cleared.statusCode).toBe(200);
    });

    it('a GET carrying a Content-Type header is not refused (there is no body to guard)', async () => {
      const res = await inject({ method: 'GET', url: '/pairing/pending', headers: { 'content-type': 'text/plain' } });
      expect(res.statusCode).toBe(200);
    });

    it('an oversize body is refused with 413 before it is parsed', async () => {
      const big = JSON.stringify({ code: 'BIGBIG', pad: 'x'.repeat(relay.config.bodyLimitBytes + 10) });
      const res = await noEvent(() =>
        inject({ method: 'POST', url: '/pairing/register', headers: { 'content-type': 'application/json' }, payload: big }),
      );
      expectErrorBody(res, 413, 'body_too_large');
    });

    it('an oversize body over real HTTP is a 413 JSON answer', async () => {
      const res = await noEvent(() =>
        fetch(`${relay.url}/pairing/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code: 'BIGBIG', pad: 'x'.repeat(relay.config.bodyLimitBytes + 10) }),
        }),
      );
      expect(res.status).toBe(413);
      expect(await json(res)).toMatchObject({ ok: false, code: 'body_too_large' });
    });

    it('PATCH /sessions with bad bodies: 400 and no event', async () => {
      const cases: Array<[unknown, string | RegExp]> = [
        [[{ ttl_seconds: 1 }], /validation/],
        [{}, 'validation.empty'],
        [{ ttl_seconds: 'soon' }, /validation/],
        [{ ttl_seconds: -1 }, /validation/],
        [{ grants: ['chat'] }, /validation/],
        [{ grants: { chat: { x: 1 } } }, 'validation.grant'],
        [{ grants: { nope: 60 } }, 'validation.grant_channel'],
      ];
      for (const [payload, code] of cases) {
        const res = await noEvent(() =>
          inject({
            method: 'PATCH',
            url: `/sessions/${prefix}`,
            headers: { ...bearer(token), 'content-type': 'application/json' },
            payload: JSON.stringify(payload),
          }),
        );
        expectErrorBody(res, 400, code);
      }
      const nul = await noEvent(() =>
        inject({ method: 'PATCH', url: `/sessions/${prefix}`, headers: { ...bearer(token), 'content-type': 'application/json' }, payload: 'null' }),
      );
      expectErrorBody(nul, 400);
    });

    it('DELETE /sessions with a short or odd prefix: 4xx and no event', async () => {
      expectErrorBody(
        await noEvent(() => inject({ method: 'DELETE', url: '/sessions/abc', headers: bearer(token) })),
        400,
        'sessions.prefix_too_short',
      );
      expectErrorBody(
        await noEvent(() => inject({ method: 'DELETE', url: '/sessions/%25%25%25%25', headers: bearer(token) })),
        404,
        'sessions.not_found',
      );
      const long = await noEvent(() => inject({ method: 'DELETE', url: `/sessions/${'z'.repeat(300)}`, headers: bearer(token) }));
      expectErrorBody(long, 414, 'uri_too_long');
      expect(long.body).not.toContain('zzzz');
      const badUrl = await noEvent(() => inject({ method: 'DELETE', url: '/sessions/%E0%A4%A', headers: bearer(token) }));
      expectErrorBody(badUrl, 400, 'bad_url');
    });

    it('the relay is still healthy after all of that', async () => {
      const res = await inject({ method: 'GET', url: '/health' });
      expect(res.statusCode).toBe(200);
      expect(relay.logs.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    });
  });

  describe('secrets never leak', () => {
    it('tokens, codes and the install key appear in no log line, no event file and no snapshot', async () => {
      const secrets: string[] = [token];
      // A minted code and its QR payload, a registered code, a public request's code, a reconnect token.
      const mint = JSON.parse((await inject({ method: 'POST', url: '/pairing/mint', payload: { ttl_seconds: 3600 } })).body);
      secrets.push(mint.code);
      const reg = nextCode();
      expect((await registerCode(relay, reg)).status).toBe(200);
      secrets.push(reg);
      const pub = JSON.parse((await inject({ method: 'POST', url: '/pairing', remoteAddress: '10.0.0.88', payload: { device_name: 'pub' } })).body);
      secrets.push(pub.code);
      // Use them all: pair with the minted code, reconnect with the token, fail with a wrong token.
      const p = await Phone.connect(relay.url);
      const ok = await p.auth({ pairing_code: mint.code, device_id: 'leak-test' });
      expect(ok.type).toBe('auth.ok');
      secrets.push(ok.payload.session_token as string);
      p.close();
      const again = await Phone.connect(relay.url);
      expect((await again.auth({ session_token: token })).type).toBe('auth.ok');
      again.close();
      const wrongToken = 'W'.repeat(43);
      const bad = await Phone.connect(relay.url);
      expect((await bad.auth({ session_token: wrongToken })).type).toBe('auth.fail');
      secrets.push(wrongToken);
      await inject({ method: 'GET', url: '/sessions', headers: { authorization: `Bearer ${'Q'.repeat(43)}` } });
      secrets.push('Q'.repeat(43));
      const badCodePhone = await Phone.connect(relay.url);
      expect((await badCodePhone.auth({ pairing_code: 'ZQ9XW1' })).type).toBe('auth.fail');
      secrets.push('ZQ9XW1');
      await relay.loop.drain();

      const key = fs.readFileSync(path.join(relay.home, 'relay', 'secret.key'), 'utf8').trim();
      secrets.push(key);
      const files = walk(path.join(relay.home, 'relay')).filter((f) => !f.endsWith('secret.key'));
      const haystacks = [relay.logs.join('\n'), ...files.map((f) => fs.readFileSync(f, 'utf8'))];
      expect(relay.logs.length).toBeGreaterThan(5);
      for (const s of secrets) {
        for (const h of haystacks) expect(h.includes(s)).toBe(false);
      }
      // The prefix is the only part of a token that may be stored.
      expect(haystacks.some((h) => h.includes(prefix))).toBe(true);
    });

    it('the event log and the install key are 0600 and their directories 0700', () => {
      const relayDir = path.join(relay.home, 'relay');
      expect(fs.statSync(path.join(relayDir, 'secret.key')).mode & 0o777).toBe(0o600);
      for (const f of walk(path.join(relayDir, 'events'))) expect(fs.statSync(f).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.join(relayDir, 'events')).mode & 0o777).toBe(0o700);
    });

    it('error bodies never echo a submitted credential', async () => {
      const t = 'S'.repeat(43);
      const res = await inject({ method: 'GET', url: '/sessions', headers: { authorization: `Bearer ${t}` } });
      expect(res.body.includes(t)).toBe(false);
      const res2 = await inject({ method: 'POST', url: '/pairing/approve', payload: { code: 'QWERTY' } });
      expect(res2.body.includes('QWERTY')).toBe(false);
    });
  });

  describe('WebSocket upgrade origin', () => {
    it('refuses a foreign Origin before the 101 and accepts none or its own', async () => {
      await expect(Phone.connect(relay.url, { headers: { origin: 'http://evil.example.com' } })).rejects.toMatchObject({ status: 403 });
      const own = await Phone.connect(relay.url, { headers: { origin: `http://127.0.0.1:${relay.port}` } });
      own.close();
      const none = await Phone.connect(relay.url);
      none.close();
    });
  });

  describe('over a real non-loopback socket', () => {
    const lan = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    const maybe = lan ? it : it.skip;
    maybe('a relay bound to 0.0.0.0 refuses loopback routes to a peer on the LAN address, even with Host: localhost', async () => {
      const wide = await startRelay({ env: { RELAY_HOST: '0.0.0.0' } });
      try {
        for (const r of LOOPBACK_ROUTES) {
          const res = await request(`http://${lan}:${wide.port}${r.url}`, r.method, r.payload, { host: `localhost:${wide.port}` });
          expect(res.status).toBe(403);
          expect(JSON.parse(res.body)).toMatchObject({ ok: false, code: 'auth.loopback_only' });
        }
        const health = await request(`http://${lan}:${wide.port}/health`, 'GET');
        expect(health.status).toBe(200);
        expect(wide.loop.models.pairing.live(wide.clock.now())).toHaveLength(0);
      } finally {
        await wide.close();
      }
    });
  });
});

/** A raw node:http request, so the Host header can be set freely (fetch forbids it). */
function request(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      { method, headers: { ...headers, ...(data ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(data)) } : {}) } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(path.join(dir, d.name)) : [path.join(dir, d.name)]));
}
