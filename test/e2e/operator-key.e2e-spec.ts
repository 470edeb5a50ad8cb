import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { nginxForwarder, rawRequest, tcpForwarder, type Forwarder } from '../support/forwarders';
import { call } from '../support/http';

/**
 * Issue 34, finding 1: loopback is not an identity. A textbook nginx `proxy_pass` and any L4 forwarder
 * (ssh -R, socat) put every stranger on 127.0.0.1 with a loopback Host and no forwarding header. Before,
 * each of the requests below answered 200 through them; the operator's powers now rest on the operator key.
 */
const JSON_BODY = { 'content-type': 'application/json' };

describe('the operator key', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay?.close());

  it('is made at first start: <home>/relay/operator.key, 0600, 32 random bytes as base64url on one line, kept across restarts', async () => {
    const file = path.join(relay.home, 'relay', 'operator.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(Buffer.from(text.trim(), 'base64url')).toHaveLength(32);
    relay = await relay.restart();
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expect(relay.operatorKey).toBe(text.trim());
  });

  it('a loopback caller without it is refused on every operator surface (401 auth.operator_key_required), with it served', async () => {
    const { prefix, phone } = await pairPhone(relay);
    const surfaces: Array<[string, string, unknown?]> = [
      ['GET', '/console/api/overview'],
      ['GET', '/console/api/sessions'],
      ['GET', '/console/api/events?limit=5'],
      ['GET', '/pairing/pending'],
      ['GET', '/bridge/devices'],
      ['GET', '/terminal/shells'],
      ['GET', '/metrics'],
      ['GET', '/relay/profiles'],
      ['GET', '/openapi.json'],
      ['GET', '/clipboard/inbox'],
      ['GET', '/phone/outbound'],
      ['POST', '/console/api/pairing/mint', {}],
      ['POST', `/console/api/sessions/${prefix}/revoke`, {}],
    ];
    for (const [method, route, body] of surfaces) {
      const refused = await call(relay, method, route, body, {}, { key: false });
      expect([route, refused.status, refused.body.code]).toEqual([route, 401, 'auth.operator_key_required']);
    }
    for (const [method, route, body] of surfaces.filter(([, r]) => !r.endsWith('/revoke'))) {
      const served = await fetch(`${relay.url}${route}`, {
        method,
        headers: { ...relay.op, ...(body !== undefined ? JSON_BODY : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      expect([route, served.status]).toEqual([route, 200]);
    }
    // The phone is still paired: no refused request changed anything.
    expect((await call(relay, 'GET', '/console/api/sessions')).body.sessions.map((s: { token_prefix: string }) => s.token_prefix)).toContain(prefix);
    phone.close();
  });

  it('is also accepted as Authorization: Bearer on operator routes (a Prometheus scraper reads the file)', async () => {
    expect((await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${relay.operatorKey}` } })).status).toBe(200);
    expect((await fetch(`${relay.url}/metrics`, { headers: { authorization: 'Bearer nope-nope-nope-nope-nope' } })).status).toBe(401);
  });

  it('a wrong key is recorded as a failed credential and counted; a missing one is not', async () => {
    const before = readEvents(relay.home).filter((e) => e.type === 'auth.failed').length;
    await call(relay, 'GET', '/console/api/overview', undefined, {}, { key: false });
    expect(readEvents(relay.home).filter((e) => e.type === 'auth.failed')).toHaveLength(before);
    const wrong = await call(relay, 'GET', '/console/api/overview', undefined, { 'x-operator-key': 'x'.repeat(43) }, { key: false });
    expect(wrong.status).toBe(401);
    const failed = readEvents(relay.home).filter((e) => e.type === 'auth.failed');
    expect(failed).toHaveLength(before + 1);
    expect(failed.at(-1)!.data).toMatchObject({ ip: '127.0.0.1', kind: 'token', via: 'http', reason: 'wrong operator key' });
    expect(JSON.stringify(readEvents(relay.home))).not.toContain(relay.operatorKey);
    expect(relay.logs.join('')).not.toContain(relay.operatorKey);
  });

  it("/health's disk figures are the operator's: only with the key", async () => {
    const plain = (await (await fetch(`${relay.url}/health`)).json()) as { disk?: Record<string, unknown> };
    const keyed = (await (await fetch(`${relay.url}/health`, { headers: relay.op })).json()) as { disk?: Record<string, unknown> };
    expect(Object.keys(plain.disk ?? {})).toEqual(['low']);
    expect(keyed.disk).toHaveProperty('free_bytes');
  });
});

describe.each([
  ['an L4 forwarder (ssh -R, socat)', tcpForwarder],
  ['nginx with a bare proxy_pass', nginxForwarder],
])('behind %s', (_label, make) => {
  let relay: TestRelay;
  let fwd: Forwarder;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    fwd = await make(relay.port);
  });
  afterAll(async () => {
    await fwd?.close();
    await relay?.close();
  });

  it("a stranger gets none of the operator's powers: the console API, revoke, approvals", async () => {
    const { prefix, phone } = await pairPhone(relay);
    for (const route of ['/console/api/overview', '/console/api/sessions', '/pairing/pending', '/metrics']) {
      const res = await fetch(`${fwd.url}${route}`);
      expect([route, res.status, ((await res.json()) as { code: string }).code]).toEqual([route, 401, 'auth.operator_key_required']);
    }
    const revoke = await fetch(`${fwd.url}/console/api/sessions/${prefix}/revoke`, { method: 'POST', headers: JSON_BODY, body: '{}' });
    expect(revoke.status).toBe(401);
    expect(readEvents(relay.home).some((e) => e.type === 'session.revoked')).toBe(false);
    phone.close();
  });

  it('the platform routes the host tools call with no credential still answer there by default (what OPERATING.md warns of)', async () => {
    expect((await fetch(`${fwd.url}/relay/info`)).status).toBe(200);
    expect((await fetch(`${fwd.url}/notifications/recent`)).status).toBe(200);
    expect((await fetch(`${fwd.url}/pairing/mint`, { method: 'POST', headers: JSON_BODY, body: '{}' })).status).toBe(200);
  });
});

describe('RELAY_LOOPBACK_TRUST=key', () => {
  let relay: TestRelay;
  let fwd: Forwarder;
  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_LOOPBACK_TRUST: 'key', PHONE_ENABLED: '1' } });
    fwd = await tcpForwarder(relay.port);
  });
  afterAll(async () => {
    await fwd?.close();
    await relay?.close();
  });

  const platform: Array<[string, string, unknown?]> = [
    ['GET', '/notifications/recent'],
    ['GET', '/relay/info'],
    ['GET', '/relay/security'],
    ['POST', '/pairing/mint', {}],
    ['POST', '/pairing/register', { code: 'KEYMD1' }],
    ['POST', '/phone/message', { chat_id: 'c1', text: 'hello' }],
  ];

  it('the platform routes need the operator key or a paired bearer too; a forwarded stranger gets nothing', async () => {
    // The harness pairs as the CLI does: with the operator key.
    const { token, phone } = await pairPhone(relay);
    for (const [method, route, body] of platform) {
      const refused = await call(relay, method, route, body, {}, { key: false });
      expect([route, refused.status, refused.body.code]).toEqual([route, 401, 'auth.operator_key_required']);
      const through = await fetch(`${fwd.url}${route}`, {
        method,
        headers: body !== undefined ? JSON_BODY : {},
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      expect([route, through.status]).toEqual([route, 401]);
    }
    for (const [method, route, body] of platform) {
      const keyed = await call(relay, method, route, body && route === '/pairing/register' ? { code: 'KEYMD2' } : body);
      expect([route, keyed.status]).toEqual([route, 200]);
    }
    // A paired bearer instead of the key: the CLI's own pairing and the host tools with a token keep working.
    for (const route of ['/relay/info', '/notifications/recent']) {
      const bearer = await call(relay, 'GET', route, undefined, { authorization: `Bearer ${token}` }, { key: false });
      expect([route, bearer.status]).toEqual([route, 200]);
    }
    phone.close();
  });
});

describe('what a loopback request must look like', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay?.close());

  const head = (extra = '') => `Host: 127.0.0.1:${relay.port}\r\n${extra}Connection: close\r\n\r\n`;

  it('refuses an absolute-form target (what a forward proxy sends), even with the key', async () => {
    for (const route of ['/bridge/status', '/console/api/overview']) {
      const res = await rawRequest(relay.port, `GET http://evil.example${route} HTTP/1.1\r\n${head(`X-Operator-Key: ${relay.operatorKey}\r\n`)}`);
      expect([route, res.status]).toEqual([route, 403]);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'auth.loopback_only', error: expect.stringContaining('absolute') });
    }
    const plain = await rawRequest(relay.port, `GET /relay/info HTTP/1.1\r\n${head()}`);
    expect(plain.status).toBe(200);
  });

  it('refuses two Host headers', async () => {
    const res = await rawRequest(relay.port, `GET /bridge/status HTTP/1.1\r\nHost: evil.example\r\n${head()}`);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'auth.loopback_only', error: expect.stringContaining('one Host') });
  });

  it('refuses Sec-Fetch-Site: cross-site and a foreign Referer; takes its own', async () => {
    const foreign: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'cross-site' },
      { referer: 'http://evil.example/page.html' },
      { referer: 'http://127.0.0.1:9119/' },
    ];
    for (const headers of foreign) {
      const res = await call(relay, 'GET', '/bridge/status', undefined, headers);
      expect([headers, res.status, res.body.code]).toEqual([headers, 403, 'auth.loopback_only']);
    }
    const own = await call(relay, 'GET', '/console/api/overview', undefined, {
      'sec-fetch-site': 'same-origin',
      referer: `http://127.0.0.1:${relay.port}/console/devices`,
    });
    expect(own.status).toBe(200);
  });
});
