import * as http from 'node:http';
import * as path from 'node:path';
import { pairPhone, Phone, readEvents, startRelay, type TestRelay, operatorHeaderFor } from '../support/harness';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/** The operator's actions where the facts are (issue 24): unblock, end a renewal, end a shell, read a thread, the LAN page. */
const SHELL = path.join(__dirname, '../fixtures/bash-norc');
const JSON_TYPE = { 'content-type': 'application/json' };
const BAD_PEER = '127.0.0.9';
type Json = any;

function rawRequest(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; type: string; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: { ...operatorHeaderFor(url), ...opts.headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Ten wrong pairing codes from one loopback address (127.0.0.9): the limiter blocks it for 120 s. */
async function blockAddress(relay: TestRelay, address = BAD_PEER): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const p = await Phone.connect(relay.url, { localAddress: address });
    expect((await p.auth({ pairing_code: 'BAD000' })).type).toBe('auth.fail');
    await p.closed;
  }
  await relay.loop.drain();
}

async function upgradeStatus(relay: TestRelay, address: string): Promise<number> {
  try {
    const p = await Phone.connect(relay.url, { localAddress: address });
    p.close();
    return 101;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

describe('console actions', () => {
  let relay: TestRelay;
  let api: string;
  beforeAll(async () => {
    relay = await startRelay({ config: { terminalShell: SHELL } });
    api = `${relay.url}/console/api`;
  });
  afterAll(() => relay?.close());

  const get = async (p: string): Promise<Json> => (await fetch(`${api}${p}`)).json();
  const post = (p: string, body: unknown, headers: Record<string, string> = JSON_TYPE) =>
    fetch(`${api}${p}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const eventCount = () => readEvents(relay.home).length;

  describe('rate-limit blocks: listed on Pairing, counted on the Overview, lifted by the operator', () => {
    it('lists the block with since and until, unblocks it with an operator event, and the address may connect again', async () => {
      expect((await get('/pairing/blocks')).blocks).toEqual([]);
      const t0 = Math.floor(relay.clock.now().getTime() / 1000);
      await blockAddress(relay);
      expect(await upgradeStatus(relay, BAD_PEER)).toBe(429);
      const view = await get('/pairing/blocks');
      expect(view.blocks).toEqual([{ address: BAD_PEER, kind: 'code', since: t0, until: t0 + 120 }]);
      expect((await get('/overview')).rate_limit_blocks).toBe(1);

      const res = await post('/pairing/unblock', { address: BAD_PEER });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, unblocked: BAD_PEER });
      const cleared = readEvents(relay.home).at(-1)!;
      expect(cleared).toMatchObject({ type: 'ratelimit.cleared', actor: 'operator', data: { ip: BAD_PEER, reason: 'unblocked by the operator' } });
      expect((await get('/pairing/blocks')).blocks).toEqual([]);
      expect((await get('/overview')).rate_limit_blocks).toBe(0);
      expect(await upgradeStatus(relay, BAD_PEER)).toBe(101);

      // Twice: nothing to lift, and nothing written.
      const before = eventCount();
      const again = await post('/pairing/unblock', { address: BAD_PEER });
      expect(again.status).toBe(404);
      expect(await again.json()).toMatchObject({ ok: false, code: 'ratelimit.not_blocked' });
      expect(eventCount()).toBe(before);
    });

    it('a block that ran out is no longer listed, and cannot be lifted', async () => {
      await blockAddress(relay, '127.0.0.10');
      expect((await get('/pairing/blocks')).blocks.map((b: Json) => b.address)).toEqual(['127.0.0.10']);
      relay.clock.advanceSeconds(121);
      expect((await get('/pairing/blocks')).blocks).toEqual([]);
      expect((await post('/pairing/unblock', { address: '127.0.0.10' })).status).toBe(404);
    });

    it.each([
      ['no body at all', undefined, 400],
      ['an empty object', {}, 400],
      ['a number', { address: 5 }, 400],
      ['an empty address', { address: '' }, 400],
      ['a control character', { address: '127.0.0.9\n' }, 400],
      ['an address of 200 characters', { address: '1'.repeat(200) }, 400],
      ['an array', [BAD_PEER], 400],
      ['null', null, 400],
      ['a string', `"${BAD_PEER}"`, 400],
      ['broken JSON', '{"address":', 400],
    ])('refuses %s with a clean 4xx and writes nothing', async (_label, body, status) => {
      // One block for every case (the first case sets it; a refused unblock leaves it in force).
      if (!(await get('/pairing/blocks')).blocks.some((b: Json) => b.address === '127.0.0.11')) await blockAddress(relay, '127.0.0.11');
      const before = eventCount();
      const res = await fetch(`${api}/pairing/unblock`, {
        method: 'POST',
        headers: JSON_TYPE,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      expect(res.status).toBe(status);
      const answer = (await res.json()) as Json;
      expect(answer).toMatchObject({ ok: false, error: expect.any(String), code: expect.any(String) });
      expect(eventCount()).toBe(before);
      expect((await get('/pairing/blocks')).blocks.map((b: Json) => b.address)).toContain('127.0.0.11');
      expect(relay.logs.join('')).not.toContain('"statusCode":500');
    });

    it('refuses another machine, a proxied request, a foreign Host or Origin, and a cross-site form post', async () => {
      await blockAddress(relay, '127.0.0.12');
      const before = eventCount();
      const body = JSON.stringify({ address: '127.0.0.12' });
      const fromLan = await relay.app.inject({
        method: 'POST',
        url: '/console/api/pairing/unblock',
        remoteAddress: '192.168.1.20',
        headers: JSON_TYPE,
        payload: body,
      });
      expect(fromLan.statusCode).toBe(403);
      expect(fromLan.json()).toMatchObject({ code: 'auth.loopback_only' });
      const listFromLan = await relay.app.inject({ method: 'GET', url: '/console/api/pairing/blocks', remoteAddress: '192.168.1.20' });
      expect(listFromLan.statusCode).toBe(403);
      for (const headers of [{ 'x-forwarded-for': '203.0.113.9' }, { host: 'evil.example' }, { origin: 'http://evil.example' }] as Array<
        Record<string, string>
      >) {
        const res = await rawRequest(`${api}/pairing/unblock`, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body });
        expect(res.status).toBe(403);
      }
      // A form another page could post without a preflight: not JSON, refused before it is read.
      const form = await rawRequest(`${api}/pairing/unblock`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
      expect(form.status).toBe(415);
      const urlencoded = await rawRequest(`${api}/pairing/unblock`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'address=127.0.0.12',
      });
      expect(urlencoded.status).toBe(415);
      expect(eventCount()).toBe(before);
      expect((await get('/pairing/blocks')).blocks.map((b: Json) => b.address)).toContain('127.0.0.12');
    });
  });

  describe('Devices: when a phone went offline, and renewals that outlive their session', () => {
    it('says when the phone went offline', async () => {
      const { phone, prefix } = await pairPhone(relay, { device: { device_name: 'Offline phone', device_id: 'offline-phone' } });
      const row = async () => ((await get('/sessions')).sessions as Json[]).find((s) => s.token_prefix === prefix);
      expect(await row()).toMatchObject({ online: true, offline_since: null });
      relay.clock.advanceSeconds(30);
      const leftAt = Math.floor(relay.clock.now().getTime() / 1000);
      phone.close();
      await phone.closed;
      await eventually(async () => (await row()).online === false);
      expect(await row()).toMatchObject({ online: false, offline_since: leftAt });
    });

    it('lists a device whose session expired but may renew, and ends its renewal as the operator', async () => {
      const { phone, prefix } = await pairPhone(relay, {
        terms: { ttl_seconds: 3600 },
        device: { device_name: 'Short phone', device_id: 'short-phone' },
      });
      // Its disconnect recorded first, so the counts below see only what the requests write.
      await leave(relay, phone, prefix);
      relay.clock.advanceSeconds(3601);
      await relay.sweep();
      const view = await get('/sessions');
      expect((view.sessions as Json[]).map((s) => s.token_prefix)).not.toContain(prefix);
      expect(view.renewals_without_session).toEqual(
        expect.arrayContaining([expect.objectContaining({ device_id: 'short-phone', token_prefix: prefix, renewals: 0 })]),
      );
      expect(JSON.stringify(view)).not.toMatch(/refresh/i);

      const before = eventCount();
      for (const body of [{}, { device_id: 7 }, { device_id: '' }, { device_id: 'a\u0000b' }, { device_id: 'x'.repeat(300) }]) {
        const res = await post('/sessions/end-device-trust', body);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ ok: false, code: 'trust.bad_device_id' });
      }
      expect((await post('/sessions/end-device-trust', { device_id: 'no-such-device' })).status).toBe(404);
      const lan = await relay.app.inject({
        method: 'POST',
        url: '/console/api/sessions/end-device-trust',
        remoteAddress: '192.168.1.20',
        headers: JSON_TYPE,
        payload: JSON.stringify({ device_id: 'short-phone' }),
      });
      expect(lan.statusCode).toBe(403);
      expect(eventCount()).toBe(before);

      const res = await post('/sessions/end-device-trust', { device_id: 'short-phone' });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, device_id: 'short-phone', trust_ended: true });
      expect(readEvents(relay.home).at(-1)).toMatchObject({
        type: 'trust.ended',
        actor: 'operator',
        data: { deviceId: 'short-phone', reason: 'operator', by: 'operator' },
      });
      expect((await get('/sessions')).renewals_without_session.map((r: Json) => r.device_id)).not.toContain('short-phone');
    });
  });

  describe('Terminal: the operator ends a shell', () => {
    it('hangs the shell up, records its end as the operator and tells the phone', async () => {
      const { phone, prefix } = await pairPhone(relay);
      phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24, session_name: 'ops' }, 'a1');
      const attached = await phone.next((f) => f.id === 'a1');
      const pid = attached.payload.pid as number;
      const shell = ((await get('/terminal')).shells as Json[]).find((s) => s.token_prefix === prefix)!;
      expect(shell).toMatchObject({ session_name: 'ops', attached: true, pid });

      const res = await post(`/terminal/shells/${shell.shell_id}/end`, {});
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, shell_id: shell.shell_id });
      const told = await phone.next((f) => f.type === 'terminal.detached', 5000);
      expect(told.payload).toMatchObject({ session_name: 'ops', reason: 'killed' });
      expect(() => process.kill(pid, 0)).toThrow();
      expect(readEvents(relay.home).filter((e) => e.type === 'terminal.closed' && e.data.pid === pid)).toEqual([
        expect.objectContaining({ actor: 'operator', data: expect.objectContaining({ reason: 'killed', sessionName: 'ops', tokenPrefix: prefix }) }),
      ]);
      expect((await get('/terminal')).shells.map((s: Json) => s.shell_id)).not.toContain(shell.shell_id);

      const again = await post(`/terminal/shells/${shell.shell_id}/end`, {});
      expect(again.status).toBe(404);
      expect(await again.json()).toMatchObject({ code: 'terminal.not_found' });
      await leave(relay, phone, prefix);
    });

    it('refuses a malformed id, another machine and a cross-site post, and ends nothing', async () => {
      const { phone, prefix } = await pairPhone(relay);
      phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24 }, 'a2');
      await phone.next((f) => f.id === 'a2');
      const shell = ((await get('/terminal')).shells as Json[]).find((s) => s.token_prefix === prefix)!;
      const before = eventCount();
      for (const id of ['nope', '../../x', `${shell.shell_id}x`, 'A'.repeat(36)]) {
        const res = await post(`/terminal/shells/${encodeURIComponent(id)}/end`, {});
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ ok: false, code: 'terminal.bad_shell_id' });
      }
      const lan = await relay.app.inject({
        method: 'POST',
        url: `/console/api/terminal/shells/${shell.shell_id}/end`,
        remoteAddress: '10.0.0.5',
        headers: JSON_TYPE,
        payload: '{}',
      });
      expect(lan.statusCode).toBe(403);
      const form = await rawRequest(`${api}/terminal/shells/${shell.shell_id}/end`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{}',
      });
      expect(form.status).toBe(415);
      expect(eventCount()).toBe(before);
      expect((await get('/terminal')).shells.map((s: Json) => s.shell_id)).toContain(shell.shell_id);
      phone.send('terminal', 'terminal.kill', {}, 'k');
      await phone.next((f) => f.id === 'k');
      phone.close();
    });
  });

  describe('Threads', () => {
    it('says Threads is off when PHONE_ENABLED is unset', async () => {
      expect(await get('/threads')).toMatchObject({ ok: true, enabled: false });
      expect((await get('/overview')).threads).toMatchObject({ enabled: false });
    });

    it('opens a thread: its messages and replies, oldest first; refuses a bad or unknown chat id', async () => {
      const on = await startRelay({ env: { PHONE_ENABLED: '1' } });
      try {
        const onApi = `${on.url}/console/api`;
        expect(((await (await fetch(`${onApi}/threads`)).json()) as Json).enabled).toBe(true);
        const { phone } = await pairPhone(on, { device: { device_name: 'Reader', device_id: 'reader' } });
        const posted = await fetch(`${on.url}/phone/message`, {
          method: 'POST',
          headers: JSON_TYPE,
          body: JSON.stringify({ chat_id: 'ops', title: 'Backup', text: 'Backup finished.' }),
        });
        const { message_id } = (await posted.json()) as Json;
        phone.send('proactive', 'proactive.reply', { chat_id: 'ops', text: 'Thanks!', reply_to: message_id }, 'r1');
        await eventually(async () => ((await (await fetch(`${onApi}/threads/ops`)).json()) as Json).entries?.length === 2);
        const thread = (await (await fetch(`${onApi}/threads/ops`)).json()) as Json;
        expect(thread).toMatchObject({ ok: true, chat_id: 'ops', title: 'Backup', messages: 1, replies: 1, older: 0 });
        expect(thread.entries).toEqual([
          expect.objectContaining({ kind: 'message', id: message_id, title: 'Backup', text: 'Backup finished.', state: 'queued' }),
          expect.objectContaining({ kind: 'reply', text: 'Thanks!', device_name: 'Reader', reply_to: message_id }),
        ]);
        const missing = await fetch(`${onApi}/threads/nowhere`);
        expect(missing.status).toBe(404);
        expect(await missing.json()).toMatchObject({ code: 'phone.thread_not_found' });
        const bad = await fetch(`${onApi}/threads/a%01b`);
        expect(bad.status).toBe(400);
        expect(await bad.json()).toMatchObject({ code: 'phone.bad_chat_id' });
        const lan = await on.app.inject({ method: 'GET', url: '/console/api/threads/ops', remoteAddress: '192.168.1.20' });
        expect(lan.statusCode).toBe(403);
        phone.close();
      } finally {
        await on.close();
      }
    });
  });

  describe('the console opened from another machine', () => {
    it('a browser navigation reads a page saying the console is loopback-only; the refusal stays a 403', async () => {
      for (const url of ['/console/', '/console', '/console/devices?x=1']) {
        const res = await relay.app.inject({
          method: 'GET',
          url,
          remoteAddress: '192.168.1.20',
          headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
        });
        expect(res.statusCode).toBe(403);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.body).toContain("<h1>The svc relay console answers only on the relay's own machine</h1>");
        expect(res.body).toContain('this route answers only to processes on the relay host (loopback)');
        expect(res.body).toContain('ssh -L');
        expect(res.body).not.toMatch(/<script/i);
        expect(String(res.headers['content-security-policy'])).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
        expect(res.headers['x-frame-options']).toBe('DENY');
      }
    });

    it('on a real socket too, through a foreign Host (DNS rebinding) and a proxy header', async () => {
      for (const headers of [{ host: 'evil.example' }, { 'x-forwarded-for': '203.0.113.9' }] as Array<Record<string, string>>) {
        const res = await rawRequest(`${relay.url}/console/`, { headers: { ...headers, accept: 'text/html' } });
        expect(res.status).toBe(403);
        expect(res.type).toBe('text/html; charset=utf-8');
        expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
        expect(res.body).toContain('loopback');
      }
    });

    it('API calls and scripts keep the JSON error', async () => {
      const cases = [
        { url: '/console/', headers: {} },
        { url: '/console/', headers: { accept: 'application/json' } },
        { url: '/console/api/overview', headers: { accept: 'text/html' } },
        { url: '/console/api/stream', headers: { accept: 'text/html' } },
      ];
      for (const c of cases) {
        const res = await relay.app.inject({ method: 'GET', url: c.url, remoteAddress: '192.168.1.20', headers: c.headers });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ ok: false, code: 'auth.loopback_only' });
      }
      const post = await relay.app.inject({
        method: 'POST',
        url: '/console/',
        remoteAddress: '192.168.1.20',
        headers: { accept: 'text/html', ...JSON_TYPE },
        payload: '{}',
      });
      expect(post.headers['content-type']).not.toContain('text/html');
    });

    it('another route refused to a browser keeps its JSON (only the console has the page)', async () => {
      // Another route's 403 (not the console) stays JSON even for a browser.
      const other = await relay.app.inject({
        method: 'GET',
        url: '/terminal/shells',
        remoteAddress: '192.168.1.20',
        headers: { accept: 'text/html' },
      });
      expect(other.statusCode).toBe(403);
      expect(other.headers['content-type']).toContain('application/json');
    });
  });
});

/** Closes a phone and waits for its disconnect to be recorded (so a later count of events is not racing it). */
async function leave(relay: TestRelay, phone: Phone, prefix: string): Promise<void> {
  phone.close();
  await eventually(async () => readEvents(relay.home).some((e) => e.type === 'phone.disconnected' && e.data.tokenPrefix === prefix));
}

async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
