import { CODE_REFUSALS, DomainError } from '@svc/domain';
import * as fs from 'node:fs';
import WebSocket from 'ws';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { ChannelRouter } from '../../apps/relay/src/phone-socket/channel-router';
import { PhoneHub } from '../../apps/relay/src/phone-socket/phone-hub.service';
import { CHANNEL_GRANT } from '../../apps/relay/src/phone-socket/envelope';
import { bearer, json, nextCode, pairPhone, Phone, readEvents, registerCode, startRelay, type Frame, type TestRelay } from '../support/harness';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// fdatasync stays real, but a test can hold one to act between a decision and its durability.
const realFs = jest.requireActual<typeof import('node:fs')>('node:fs');
jest.mock('node:fs', () => {
  const real = jest.requireActual<typeof import('node:fs')>('node:fs');
  return { ...real, fdatasync: jest.fn((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => real.fdatasync(fd, cb)) };
});

describe('phone socket', () => {
  let relay: TestRelay;
  const chatFrames: Frame[] = [];

  beforeAll(async () => {
    relay = await startRelay({ config: { authTimeoutMs: 300, maxUnauthenticatedSockets: 8 } });
    // A real channel handler on `chat` (no feature module registers it yet), to prove routing.
    relay.app.get(ChannelRouter).register('chat', {
      onFrame(conn, env) {
        chatFrames.push(env);
        if (env.type === 'boom.domain') throw new DomainError('chat.nope', 'invalid', 'no such thing');
        if (env.type === 'boom.bug') throw new Error('handler bug with secret detail');
        conn.send('chat', 'echo', { got: env.payload, device: conn.principal?.deviceId ?? null }, env.id);
      },
    });
  });
  afterAll(async () => {
    await relay.close();
  });

  it('a phone that leaves while its pairing is being written gets no session: it is revoked as abandoned', async () => {
    const code = nextCode();
    expect((await registerCode(relay, code)).status).toBe(200);
    await relay.loop.drain();
    const before = relay.loop.lastSeq;
    // Hold the next fdatasync until the phone's socket is gone, so the pairing is decided while the
    // phone is connected and made durable after it left.
    let release!: () => void;
    const gone = new Promise<void>((r) => (release = r));
    const fdatasync = fs.fdatasync as unknown as jest.Mock;
    const calls = fdatasync.mock.calls.length;
    fdatasync.mockImplementationOnce((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      void gone.then(() => realFs.fdatasync(fd, cb));
    });
    const conns = (relay.app.get(PhoneHub) as unknown as { conns: Set<unknown> }).conns;
    try {
      const open = conns.size;
      const phone = await Phone.connect(relay.url);
      await settle(() => conns.size === open + 1);
      phone.send('system', 'auth', { pairing_code: code, device_name: 'Leaver', device_id: 'dev-leaver' }, 'a1');
      await settle(() => fdatasync.mock.calls.length > calls);
      phone.ws.terminate();
      await settle(() => conns.size === open); // the relay saw the socket close
      release();
      await settle(() => readEvents(relay.home).some((e) => e.seq > before && e.type === 'session.revoked'));
    } finally {
      release();
    }
    // A line in the file is not an event yet: the read models advance after its fdatasync.
    await relay.loop.drain();
    const events = readEvents(relay.home).filter((e) => e.seq > before);
    const created = events.find((e) => e.type === 'session.created')!;
    expect(created).toBeDefined();
    expect(events.find((e) => e.type === 'session.revoked')!.data).toEqual({
      tokenPrefix: created.data.tokenPrefix,
      by: 'system',
      self: false,
      reason: 'abandoned',
    });
    // The connect was decided with the pairing (one batch, admitted or refused together); the socket's
    // close is recorded after it, so the phone was never online.
    const connected = events.find((e) => e.type === 'phone.connected')!;
    expect(connected.data.tokenPrefix).toBe(created.data.tokenPrefix);
    expect(events.find((e) => e.type === 'phone.disconnected')!.data).toMatchObject({ connId: connected.data.connId, code: 1006 });
    expect(relay.loop.models.connections.isOnline(created.data.tokenPrefix as string)).toBe(false);
    expect(relay.loop.models.sessions.byTokenPrefix(created.data.tokenPrefix as string)).toBeUndefined();
    // The code stays used: one-shot, whatever happened to the socket.
    const again = await Phone.connect(relay.url);
    expect((await again.auth({ pairing_code: code, device_name: 'Leaver', device_id: 'dev-leaver' })).type).toBe('auth.fail');
    again.close();
  });

  describe('first frame: system/auth', () => {
    it.each(['/ws', '/'])('accepts a session token on %s and answers auth.ok with the same token', async (p) => {
      const { phone, token, prefix, ok } = await pairPhone(relay);
      phone.close();
      const again = await Phone.connect(relay.url, { path: p });
      const res = await again.auth({ session_token: token, device_name: 'ignored on reconnect' });
      expect(res).toMatchObject({
        type: 'auth.ok',
        id: 'auth-1',
        payload: { session_token: token, token_prefix: prefix, expires_at: ok.payload.expires_at },
      });
      again.close();
    });

    it('a phone can pair on the root path /', async () => {
      const { phone } = await pairPhone(relay);
      phone.close();
    });

    it.each<[string, (p: Phone) => void, string]>([
      ['a frame on another channel', (p) => p.send('chat', 'message', { text: 'hi' }), 'first frame must be system/auth'],
      ['system/ping before auth', (p) => p.send('system', 'ping', {}), 'first frame must be system/auth'],
      ['text that is not JSON', (p) => p.sendRaw('hello'), 'frame is not valid JSON'],
      ['a JSON array', (p) => p.sendRaw('[1,2]'), 'frame must be a JSON object {channel, type, id, payload}'],
      ['a binary frame', (p) => p.sendRaw(Buffer.from([1, 2, 3])), 'first frame must be a system/auth JSON envelope'],
      ['auth without a credential', (p) => p.send('system', 'auth', { device_name: 'x' }), 'system/auth needs pairing_code or session_token'],
      [
        'a non-object payload',
        (p) => p.sendRaw(JSON.stringify({ channel: 'system', type: 'auth', payload: 'T00001' })),
        'payload: must be an object',
      ],
      ['device_name of the wrong type', (p) => p.send('system', 'auth', { pairing_code: 'ABCDEF', device_name: 5 }), 'device_name must be a string'],
    ])('%s: auth.fail and close 4401', async (_label, act, reason) => {
      const p = await Phone.connect(relay.url);
      act(p);
      const fail = await p.type('system', 'auth.fail');
      expect(fail.payload).toMatchObject({ reason });
      expect(await p.closed).toBe(4401);
    });

    const generic = 'Invalid pairing code or session token';
    it.each([
      ['an unknown token', { session_token: 'N'.repeat(43) }, generic],
      ['an absurdly long token', { session_token: 'L'.repeat(5000) }, generic],
      ['an unknown code', { pairing_code: 'QQQQQ1' }, CODE_REFUSALS.unknown], // which: PROTOCOL.md, Pairing
      ['a malformed code', { pairing_code: 'not-a-code' }, generic],
      ['a code of the wrong type', { pairing_code: 123456 }, generic],
    ])('%s: its auth.fail reason, recorded as auth.failed', async (_label, payload, reason) => {
      await relay.loop.drain();
      const before = readEvents(relay.home).filter((e) => e.type === 'auth.failed').length;
      const p = await Phone.connect(relay.url);
      const fail = await p.auth(payload);
      expect(fail).toMatchObject({ type: 'auth.fail', payload: { reason, code: 'invalid_credentials' } });
      expect(await p.closed).toBe(4401);
      await relay.loop.drain();
      const failures = readEvents(relay.home).filter((e) => e.type === 'auth.failed');
      expect(failures.length).toBe(before + 1);
      expect(failures.at(-1)).toMatchObject({ data: { ip: '127.0.0.1', via: 'ws', kind: 'session_token' in payload ? 'token' : 'code' } });
      // Unblock for the tests after this one (a successful register clears blocks).
      await fetch(`${relay.url}/pairing/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: `CLR${Math.floor(Math.random() * 900 + 100)}` }),
      });
    });

    it('a first frame over 16 KiB is refused with close 1009 before it is parsed', async () => {
      const p = await Phone.connect(relay.url);
      p.send('system', 'auth', { pairing_code: 'ABCDEF', device_name: 'x'.repeat(20_000) });
      expect(await p.closed).toBe(1009);
    });

    it('no auth within authTimeoutMs: auth.fail and close 4408', async () => {
      const p = await Phone.connect(relay.url);
      const fail = await p.type('system', 'auth.fail', 2000);
      expect(String(fail.payload.reason)).toMatch(/timed out/);
      expect(await p.closed).toBe(4408);
    });

    it('an authenticated socket is not closed by the auth timer', async () => {
      const { phone } = await pairPhone(relay);
      await new Promise((r) => setTimeout(r, 400)); // longer than authTimeoutMs (real timer, on purpose)
      phone.send('system', 'ping', { ts: 1 }, 'after-timeout');
      expect((await phone.next((f) => f.id === 'after-timeout')).type).toBe('pong');
      phone.close();
    });

    it('at the cap of unauthenticated sockets, the oldest is dropped (1013) to admit a new one', async () => {
      const idle = await Promise.all(Array.from({ length: 8 }, (_, i) => Phone.connect(relay.url, { localAddress: `127.0.1.${i + 1}` })));
      const fresh = await Phone.connect(relay.url);
      expect(await idle[0].closed).toBe(1013);
      expect(idle.slice(1).every((p) => p.closeCode === null)).toBe(true);
      for (const p of [...idle, fresh]) p.close();
      await Promise.all([...idle, fresh].map((p) => p.closed));
    });

    it('upgrades are refused on paths other than /ws and /', async () => {
      await expect(Phone.connect(relay.url, { path: '/sessions' })).rejects.toBeDefined();
    });
  });

  describe('after auth', () => {
    let phone: Phone;
    let token: string;
    beforeAll(async () => {
      ({ phone, token } = await pairPhone(relay, { terms: { grants: { terminal: false } }, device: { device_id: 'socket-tests' } }));
    });
    afterAll(() => phone.close());

    it('system/ping gets system/pong with the same id and ts', async () => {
      phone.send('system', 'ping', { ts: 1234 }, 'p-1');
      expect(await phone.next((f) => f.id === 'p-1')).toEqual({ channel: 'system', type: 'pong', id: 'p-1', payload: { ts: 1234 } });
    });

    it('system/ping without ts gets the relay’s time in epoch seconds', async () => {
      phone.send('system', 'ping', undefined, 'p-2');
      const pong = await phone.next((f) => f.id === 'p-2');
      expect(pong.payload.ts).toBe(Math.floor(relay.clock.now().getTime() / 1000));
    });

    it('a protocol-level ping is answered with a pong', async () => {
      const got = new Promise<Buffer>((resolve) => phone.ws.once('pong', resolve));
      phone.ws.ping(Buffer.from('hi'));
      expect((await got).toString()).toBe('hi');
    });

    it('the server fills a uuid id when the request had none', async () => {
      phone.sendRaw(JSON.stringify({ channel: 'system', type: 'ping', payload: { ts: 5 } }));
      const pong = await phone.next((f) => f.type === 'pong' && f.payload.ts === 5);
      expect(pong.id).toMatch(UUID_RE);
    });

    it('routes a frame to its channel handler when the grant is held, with payload defaulting to {}', async () => {
      phone.send('chat', 'hello', { text: 'hi' }, 'c-1');
      expect(await phone.next((f) => f.id === 'c-1')).toMatchObject({
        channel: 'chat',
        type: 'echo',
        payload: { got: { text: 'hi' }, device: 'socket-tests' },
      });
      phone.sendRaw(JSON.stringify({ channel: 'chat', type: 'bare', id: 'c-2' }));
      expect((await phone.next((f) => f.id === 'c-2')).payload).toMatchObject({ got: {} });
    });

    it('a frame on a channel whose grant is missing: <channel>.error grant_required on that channel, nothing of it runs', async () => {
      const n = chatFrames.length;
      phone.send('terminal', 'terminal.attach', { cols: 80, rows: 24 }, 't-1');
      expect(await phone.next((f) => f.id === 't-1')).toEqual({
        channel: 'terminal',
        type: 'terminal.error',
        id: 't-1',
        payload: { message: expect.stringContaining('terminal'), code: 'grant_required', grant: 'terminal' },
      });
      expect(chatFrames.length).toBe(n);
    });

    it('every granted channel without a handler on this build answers channel_unavailable', async () => {
      // Feature modules register their channels as they land; whatever is still missing must say so.
      const router = relay.app.get(ChannelRouter);
      const missing = Object.keys(CHANNEL_GRANT).filter((ch) => !router.get(ch) && ch !== 'terminal');
      for (const channel of missing) {
        phone.send(channel, `${channel}.anything`, {}, `u-${channel}`);
        const f = await phone.next((x) => x.id === `u-${channel}`);
        expect(f).toMatchObject({ channel, type: `${channel}.error`, payload: { code: 'channel_unavailable', channel } });
      }
    });

    it.each(['nope', 'pairing', 'SYSTEM'])('unknown channel %s: system/error unknown_channel and the socket stays open', async (channel) => {
      phone.send(channel, 'x', {}, `x-${channel}`);
      expect(await phone.next((f) => f.id === `x-${channel}`)).toMatchObject({
        channel: 'system',
        type: 'error',
        payload: { code: 'unknown_channel', channel },
      });
      phone.send('system', 'ping', {}, `alive-${channel}`);
      expect((await phone.next((f) => f.id === `alive-${channel}`)).type).toBe('pong');
    });

    it.each<[string, string | Buffer]>([
      ['not JSON', '{oops'],
      ['an array', '[]'],
      ['a missing type', JSON.stringify({ channel: 'chat' })],
      ['an overlong channel', JSON.stringify({ channel: 'c'.repeat(33), type: 'x' })],
      ['a numeric id', JSON.stringify({ channel: 'chat', type: 'x', id: 5 })],
      ['a string payload', JSON.stringify({ channel: 'chat', type: 'x', payload: 'str' })],
      ['a binary frame', Buffer.from('{"channel":"chat","type":"x"}')],
    ])('a malformed frame (%s) gets system/error bad_frame and the socket stays', async (_label, data) => {
      phone.sendRaw(data);
      const err = await phone.next((f) => f.type === 'error' && f.payload.code === 'bad_frame');
      expect(err.channel).toBe('system');
      phone.send('system', 'ping', {}, 'still-here');
      expect((await phone.next((f) => f.id === 'still-here')).type).toBe('pong');
    });

    it('a second system/auth is refused without closing; unknown system types are named', async () => {
      phone.send('system', 'auth', { session_token: token }, 'a-2');
      expect((await phone.next((f) => f.id === 'a-2')).payload).toMatchObject({ code: 'already_authenticated' });
      phone.send('system', 'frobnicate', {}, 's-1');
      expect((await phone.next((f) => f.id === 's-1')).payload).toMatchObject({ code: 'unknown_type' });
    });

    it('a handler’s DomainError becomes system/error with its code; a bug becomes a generic internal error', async () => {
      phone.send('chat', 'boom.domain', {}, 'd-1');
      expect((await phone.next((f) => f.id === 'd-1')).payload).toMatchObject({ code: 'chat.nope', message: 'no such thing', channel: 'chat' });
      phone.send('chat', 'boom.bug', {}, 'd-2');
      const internal = await phone.next((f) => f.type === 'error' && f.payload.code === 'internal');
      expect(JSON.stringify(internal).includes('secret detail')).toBe(false);
      phone.send('chat', 'hello', {}, 'd-3');
      expect((await phone.next((f) => f.id === 'd-3')).type).toBe('echo');
    });

    it('frames are handled in arrival order', async () => {
      for (let i = 0; i < 50; i++) phone.send('chat', 'seq', { i }, `o-${i}`);
      const got: number[] = [];
      for (let i = 0; i < 50; i++) got.push((await phone.next((f) => f.id === `o-${i}`)).payload.got as never);
      expect(got.map((g) => (g as unknown as { i: number }).i)).toEqual([...Array(50).keys()]);
    });

    it('one device’s garbage never disturbs another device', async () => {
      const other = await pairPhone(relay);
      for (let i = 0; i < 20; i++) other.phone.sendRaw(i % 2 ? '\u0000\uffff' : Buffer.alloc(1000, 0xff));
      phone.send('chat', 'hello', {}, 'calm');
      expect((await phone.next((f) => f.id === 'calm')).type).toBe('echo');
      other.phone.close();
    });
  });

  describe('connections are state', () => {
    it('connect and disconnect are events, and /health counts clients', async () => {
      await settle(() => relay.loop.models.connections.count() === 0); // earlier tests' sockets are closing
      const { phone, prefix } = await pairPhone(relay);
      expect((await json(await fetch(`${relay.url}/health`))).clients).toBe(1);
      phone.close();
      await phone.closed;
      await settle(() => !relay.loop.models.connections.isOnline(prefix));
      expect((await json(await fetch(`${relay.url}/health`))).clients).toBe(0);
      const evs = readEvents(relay.home).filter((e) => e.data.tokenPrefix === prefix && e.type.startsWith('phone.'));
      expect(evs.map((e) => e.type)).toEqual(['phone.connected', 'phone.disconnected']);
      expect(evs[1].data).toMatchObject({ code: 1005 });
    });

    it('the same session may hold two sockets; revoking it over HTTP closes both at once', async () => {
      const a = await pairPhone(relay);
      const b = await Phone.connect(relay.url);
      expect((await b.auth({ session_token: a.token })).type).toBe('auth.ok');
      const res = await fetch(`${relay.url}/sessions/${a.prefix}`, { method: 'DELETE', headers: bearer(a.token) });
      expect(res.status).toBe(200);
      expect(await Promise.all([a.phone.closed, b.closed])).toEqual([4403, 4403]);
    });

    it('a raw ws client with no frames at all holds no session and counts as no client', async () => {
      await settle(() => relay.loop.models.connections.count() === 0);
      const ws = new WebSocket(relay.url.replace('http', 'ws') + '/ws');
      await new Promise((r) => ws.once('open', r));
      expect((await json(await fetch(`${relay.url}/health`))).clients).toBe(0);
      ws.close();
    });
  });

  describe('keepalive', () => {
    it('a relay whose event loop stalls past the ping interval keeps a phone whose pong waits unread in its socket', async () => {
      const r = await startRelay({ config: { pingIntervalMs: 100 } });
      try {
        const live = await pairPhone(r, { device: { device_id: 'stalled' } });
        // The phone answers a ping (ws pongs before it emits 'ping'), then the whole process stalls past the
        // interval before the relay has read that pong: its next ping round comes due with the pong unread.
        await new Promise<void>((done) =>
          live.phone.ws.once('ping', () => {
            const end = performance.now() + 300;
            while (performance.now() < end);
            done();
          }),
        );
        // Three more rounds: each pings the phone again only if the one before kept it (a close ends the wait).
        const dropped = live.phone.closed.then((code) => Promise.reject(new Error(`the relay dropped the live phone (${code})`)));
        dropped.catch(() => undefined); // the close at the end is expected
        for (let i = 0; i < 3; i++) await Promise.race([new Promise((res) => live.phone.ws.once('ping', res)), dropped]);
        expect(live.phone.closeCode).toBeNull();
        expect(r.loop.models.connections.isOnline(live.prefix)).toBe(true);
        live.phone.close();
      } finally {
        await r.close();
      }
    });

    it('drops a socket that stops answering protocol pings, records the disconnect, keeps a live one', async () => {
      const r = await startRelay({ config: { pingIntervalMs: 100 } });
      try {
        const live = await pairPhone(r, { device: { device_id: 'live' } });
        const code = `K${String(Date.now()).slice(-5)}`;
        expect((await r.app.inject({ method: 'POST', url: '/pairing/register', payload: { code } })).statusCode).toBe(200);
        // A phone whose network vanished: its socket never answers a ping (no autoPong), nor sends anything.
        const dead = new WebSocket(r.url.replace('http', 'ws') + '/ws', { autoPong: false });
        await new Promise((res) => dead.once('open', res));
        const okFrame = new Promise<Frame>((res) => dead.once('message', (d) => res(JSON.parse(d.toString()) as Frame)));
        dead.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_id: 'dead' } }));
        const ok = await okFrame;
        expect(ok.type).toBe('auth.ok');
        const deadPrefix = String(ok.payload.token_prefix);
        const closed = await new Promise<number>((res, rej) => {
          const t = setTimeout(() => {
            dead.terminate();
            rej(new Error('the relay kept a dead socket open'));
          }, 2000);
          dead.once('close', (c) => (clearTimeout(t), res(c)));
        });
        // The relay says why (a peer that still reads gets the close frame; a vanished one sees nothing).
        expect(closed).toBe(1008);
        await settle(() => !r.loop.models.connections.isOnline(deadPrefix));
        const record = readEvents(r.home).find((e) => e.type === 'phone.disconnected' && e.data.tokenPrefix === deadPrefix);
        expect(record?.data).toMatchObject({ code: 1008, reason: 'ping_timeout' });
        expect(r.loop.models.connections.isOnline(live.prefix)).toBe(true);
        live.phone.send('system', 'ping', {}, 'still');
        expect((await live.phone.next((f) => f.id === 'still')).type).toBe('pong');
        const list = await json(await fetch(`${r.url}/sessions`, { headers: bearer(live.token) }));
        expect(list.sessions.find((s: { token_prefix: string }) => s.token_prefix === deadPrefix).online).toBe(false);
        live.phone.close();
      } finally {
        await r.close();
      }
    });
  });

  describe('channel cleanup', () => {
    it('a channel whose onClose throws skips neither the other channels nor the disconnect record', async () => {
      const r = await startRelay();
      try {
        const router = r.app.get(ChannelRouter);
        const closedSeen: string[] = [];
        router.register('test.cleanup.a', {
          onFrame: () => undefined,
          onClose: () => {
            throw new Error('cleanup bug');
          },
        });
        router.register('test.cleanup.b', { onFrame: () => undefined, onClose: (conn) => void closedSeen.push(conn.id) });
        const { phone, prefix } = await pairPhone(r);
        phone.close();
        await phone.closed;
        await settle(() => !r.loop.models.connections.isOnline(prefix));
        expect(closedSeen).toHaveLength(1);
        expect(r.logs.some((l) => l.includes('channel onClose failed'))).toBe(true);
        expect((await fetch(`${r.url}/health`)).status).toBe(200);
      } finally {
        await r.close();
      }
    });
  });

  describe('a session past its lifetime before the sweep ran', () => {
    /** A clock whose advance does not trigger the sweep, so the gap between expiry and sweep is visible. */
    class QuietClock extends ManualClock {
      override onAdvance(): void {}
    }
    it('is refused on every channel (also those without a grant) and the socket closed', async () => {
      const quiet = await startRelay({ clock: new QuietClock('2026-03-01T12:00:00.000Z') });
      try {
        const { phone, token } = await pairPhone(quiet, { terms: { ttl_seconds: 60 } });
        phone.send('system', 'ping', {}, 'before');
        expect((await phone.next((f) => f.id === 'before')).type).toBe('pong');
        quiet.clock.advanceSeconds(60);
        phone.send('notifications', 'notification.posted', { title: 'x' }, 'late');
        expect((await phone.type('system', 'session.revoked')).payload).toMatchObject({ reason: 'expired' });
        expect(await phone.closed).toBe(4403);
        expect((await fetch(`${quiet.url}/sessions`, { headers: bearer(token) })).status).toBe(401);
      } finally {
        await quiet.close();
      }
    });
  });
});

async function settle(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}
