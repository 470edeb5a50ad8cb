import { consumeCode } from '@svc/domain';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Secrets } from '../../apps/relay/src/common/auth/secrets';
import { bearer, json, nextCode, Phone, pairPhone, readEvents, registerCode, startRelay, type TestRelay } from '../support/harness';

const DAY = 86_400;
type SessionJson = {
  token_prefix: string;
  device_name: string;
  device_id: string;
  created_at: number;
  last_seen: number;
  expires_at: number | null;
  grants: Record<string, number | null>;
  transport_hint: string | null;
  is_current: boolean;
};

describe('sessions', () => {
  let relay: TestRelay;
  const now = () => Math.floor(relay.clock.now().getTime() / 1000);
  const list = async (token: string): Promise<SessionJson[]> => {
    const res = await fetch(`${relay.url}/sessions`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    return ((await json(res)) as { sessions: SessionJson[] }).sessions;
  };
  const del = (token: string, prefix: string) => fetch(`${relay.url}/sessions/${prefix}`, { method: 'DELETE', headers: bearer(token) });
  const patch = (token: string, prefix: string, body: unknown) =>
    fetch(`${relay.url}/sessions/${prefix}`, {
      method: 'PATCH',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** A session with a chosen token, created through the real command path (prefix collisions need it). */
  async function sessionWithToken(token: string, deviceId: string): Promise<void> {
    const code = nextCode();
    expect((await registerCode(relay, code)).status).toBe(200);
    const secrets = Secrets.load(path.join(relay.home, 'relay'));
    await relay.loop.run('public:127.0.0.1', (m, t) =>
      consumeCode(
        m,
        {
          codeDigest: secrets.digest(code),
          tokenDigest: secrets.digest(token),
          tokenPrefix: token.slice(0, 8),
          device: { deviceId, deviceName: deviceId, deviceModel: null, devicePlatform: null },
          ip: '127.0.0.1',
        },
        t,
      ),
    );
  }

  beforeEach(async () => {
    relay = await startRelay();
  });
  afterEach(async () => {
    await relay.close();
  });

  describe('GET /sessions', () => {
    it('lists every active session with the wire fields, is_current for the caller, newest last_seen first', async () => {
      const a = await pairPhone(relay, { device: { device_name: 'A', device_id: 'a' }, terms: { transport_hint: 'lan' } });
      relay.clock.advanceSeconds(30); // under a minute, so A's own request below does not move its last_seen
      const b = await pairPhone(relay, { device: { device_name: 'B', device_id: 'b' } });
      const seen = await list(a.token);
      expect(seen.map((s) => s.device_name)).toEqual(['B', 'A']);
      expect(seen[1]).toEqual({
        token_prefix: a.prefix,
        device_name: 'A',
        device_id: 'a',
        device_model: null,
        device_platform: null,
        device_hostname: null,
        client_surface: 'unknown',
        device_form_factor: 'unknown',
        created_at: now() - 30,
        first_seen: now() - 30,
        last_seen: now() - 30,
        expires_at: now() - 30 + 30 * DAY,
        grants: expect.objectContaining({ chat: now() - 30 + 30 * DAY, bridge: now() - 30 + 7 * DAY }),
        transport_hint: 'lan',
        trusted_device: { issued_at: now() - 30, expires_at: now() - 30 + 180 * DAY, renewals: 0, last_renewed_at: null, adopted: false },
        online: true,
        is_current: true,
      });
      expect(seen[0].is_current).toBe(false);
      expect((await list(b.token)).map((s) => [s.device_name, s.is_current])).toEqual([
        ['B', true],
        ['A', false],
      ]);
      // Only the 8-character prefix of a token is ever shown.
      const raw = JSON.stringify(seen);
      expect(raw.includes(a.token)).toBe(false);
      expect(raw.includes(b.token)).toBe(false);
      a.phone.close();
      b.phone.close();
    });

    it('last_seen moves when a device uses its token (at most once a minute, as an event)', async () => {
      const a = await pairPhone(relay, { device: { device_id: 'a' } });
      const b = await pairPhone(relay, { device: { device_id: 'b' } });
      relay.clock.advanceSeconds(300);
      await list(a.token); // a is seen now
      await relay.loop.drain();
      const sessions = await list(b.token);
      expect(sessions[0].token_prefix).toBe(a.prefix);
      expect(sessions[0].last_seen).toBe(now());
      const seenEvents = readEvents(relay.home).filter((e) => e.type === 'session.seen');
      expect(seenEvents.length).toBeGreaterThanOrEqual(1);
      a.phone.close();
      b.phone.close();
    });

    it('a phone that talks over its socket is seen too', async () => {
      const a = await pairPhone(relay, { device: { device_id: 'a' } });
      const b = await pairPhone(relay, { device: { device_id: 'b' } });
      relay.clock.advanceSeconds(600);
      a.phone.send('system', 'ping', {}, 'p');
      await a.phone.next((f) => f.id === 'p');
      await relay.loop.drain();
      const sessions = await list(b.token);
      expect(sessions.find((s) => s.token_prefix === a.prefix)!.last_seen).toBe(now());
      expect(readEvents(relay.home).filter((e) => e.type === 'session.seen' && e.data.via === 'ws')).toHaveLength(1);
      // Throttled: more frames within the minute write nothing more.
      for (let i = 0; i < 5; i++) a.phone.send('system', 'ping', {}, `q${i}`);
      await a.phone.next((f) => f.id === 'q4');
      await relay.loop.drain();
      expect(readEvents(relay.home).filter((e) => e.type === 'session.seen' && e.data.via === 'ws')).toHaveLength(1);
      a.phone.close();
      b.phone.close();
    });

    it('/health counts sessions and connected clients', async () => {
      const a = await pairPhone(relay);
      const b = await pairPhone(relay);
      expect(await json(await fetch(`${relay.url}/health`))).toMatchObject({ sessions: 2, clients: 2 });
      a.phone.close();
      await a.phone.closed;
      await waitFor(async () => (await json(await fetch(`${relay.url}/health`))).clients === 1);
      b.phone.close();
    });
  });

  describe('DELETE /sessions/{prefix}', () => {
    it('revokes another device: its open socket is told and closed at once, its token never works again', async () => {
      const a = await pairPhone(relay, { device: { device_id: 'a' } });
      const b = await pairPhone(relay, { device: { device_id: 'b' } });
      const res = await del(a.token, b.prefix.slice(0, 4));
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ ok: true, revoked: b.prefix, revoked_self: false });
      const notice = await b.phone.type('system', 'session.revoked', 1000);
      expect(notice.payload).toEqual({ reason: 'revoked', revoked_self: false });
      expect(await b.phone.closed).toBe(4403);

      const r = await fetch(`${relay.url}/sessions`, { headers: bearer(b.token) });
      expect(r.status).toBe(401);
      expect(await json(r)).toMatchObject({ ok: false, code: 'auth.invalid_token' });
      const again = await Phone.connect(relay.url);
      expect((await again.auth({ session_token: b.token })).type).toBe('auth.fail');
      expect((await list(a.token)).map((s) => s.token_prefix)).toEqual([a.prefix]);
      const ev = readEvents(relay.home).find((e) => e.type === 'session.revoked');
      expect(ev).toMatchObject({ actor: `device:${a.prefix}`, data: { tokenPrefix: b.prefix, by: `device:${a.prefix}`, self: false } });
      a.phone.close();
    });

    it('revokes itself with revoked_self: true and its own socket is closed', async () => {
      const a = await pairPhone(relay);
      const res = await del(a.token, a.prefix);
      expect(await json(res)).toEqual({ ok: true, revoked: a.prefix, revoked_self: true });
      expect((await a.phone.type('system', 'session.revoked')).payload).toEqual({ reason: 'revoked', revoked_self: true });
      expect(await a.phone.closed).toBe(4403);
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(401);
    });

    it('closes every socket of the revoked session, not just one', async () => {
      const a = await pairPhone(relay);
      const second = await Phone.connect(relay.url);
      expect((await second.auth({ session_token: a.token })).type).toBe('auth.ok');
      const other = await pairPhone(relay);
      await del(other.token, a.prefix);
      expect(await Promise.all([a.phone.closed, second.closed])).toEqual([4403, 4403]);
      other.phone.close();
    });

    it('404 on no match, 409 on an ambiguous prefix, 400 below 4 characters; nothing written', async () => {
      const me = await pairPhone(relay);
      await sessionWithToken('abcd1111' + 'x'.repeat(35), 'c1');
      await sessionWithToken('abcd2222' + 'y'.repeat(35), 'c2');
      await relay.loop.drain();
      const before = relay.loop.lastSeq;
      const none = await del(me.token, me.prefix.startsWith('zzzz') ? 'yyyy' : 'zzzz');
      expect(none.status).toBe(404);
      expect(await json(none)).toMatchObject({ ok: false, code: 'sessions.not_found' });
      const amb = await del(me.token, 'abcd');
      expect(amb.status).toBe(409);
      expect(await json(amb)).toMatchObject({ ok: false, code: 'sessions.ambiguous_prefix', matches: 2 });
      expect((await del(me.token, 'abc')).status).toBe(400);
      await relay.loop.drain();
      expect(relay.loop.lastSeq).toBe(before);
      // One more character settles it.
      const one = await del(me.token, 'abcd1');
      expect(one.status).toBe(200);
      expect(await json(one)).toMatchObject({ revoked: 'abcd1111' });
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer('abcd1111' + 'x'.repeat(35)) })).status).toBe(401);
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer('abcd2222' + 'y'.repeat(35)) })).status).toBe(200);
      me.phone.close();
    });

    it('revoking twice: the second is a 404', async () => {
      const a = await pairPhone(relay);
      const b = await pairPhone(relay);
      expect((await del(a.token, b.prefix)).status).toBe(200);
      expect((await del(a.token, b.prefix)).status).toBe(404);
      a.phone.close();
    });

    it('needs a paired bearer', async () => {
      const b = await pairPhone(relay);
      expect((await fetch(`${relay.url}/sessions/${b.prefix}`, { method: 'DELETE' })).status).toBe(401);
      b.phone.close();
    });
  });

  describe('PATCH /sessions/{prefix}: reduction only', () => {
    it('shortens the caller’s lifetime and re-clamps its grants', async () => {
      const a = await pairPhone(relay);
      const res = await patch(a.token, a.prefix, { ttl_seconds: 3600 });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body).toMatchObject({ ok: true, token_prefix: a.prefix, expires_at: now() + 3600 });
      for (const v of Object.values(body.grants as Record<string, number>)) expect(v).toBe(now() + 3600);
      const [s] = await list(a.token);
      expect(s.expires_at).toBe(now() + 3600);
      expect(readEvents(relay.home).filter((e) => e.type === 'session.shortened')).toHaveLength(1);
      a.phone.close();
    });

    it('a PATCH that changes nothing answers the session as it stands and writes no event', async () => {
      const a = await pairPhone(relay);
      const [before] = (await list(a.token)).filter((x) => x.token_prefix === a.prefix);
      await relay.loop.drain();
      const seq = relay.loop.lastSeq;
      for (const body of [{ grants: {} }, { grants: { chat: (before.grants.chat as number) - now() } }]) {
        const res = await patch(a.token, a.prefix, body);
        expect(res.status).toBe(200);
        expect(await json(res)).toEqual({ ok: true, token_prefix: a.prefix, expires_at: before.expires_at, grants: before.grants });
      }
      await relay.loop.drain();
      expect(readEvents(relay.home).filter((e) => e.seq > seq && e.type === 'session.shortened')).toEqual([]);
      a.phone.close();
    });

    it('shortens or drops single grants', async () => {
      const a = await pairPhone(relay);
      const res = await patch(a.token, a.prefix.slice(0, 5), { grants: { terminal: '1h', bridge: false } });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.grants.terminal).toBe(now() + 3600);
      expect(body.grants.bridge).toBeUndefined();
      expect(body.grants.chat).toBe(now() + 30 * DAY);
      a.phone.close();
    });

    it.each<[string, unknown]>([
      ['extending the lifetime', { ttl_seconds: 31 * DAY }],
      ['switching to never expire', { ttl_seconds: 0 }],
      ['extending a grant', { grants: { bridge: '8d' } }],
      ['making a grant never expire', { grants: { bridge: 'never' } }],
      ['adding a grant it does not hold', { grants: { tui: '1h' } }],
    ])('refuses %s with 422 reduction_only ("Extending needs a new pairing") and writes nothing', async (_label, body) => {
      const a = await pairPhone(relay, { terms: { grants: { tui: false } } });
      await relay.loop.drain();
      const before = relay.loop.lastSeq;
      const res = await patch(a.token, a.prefix, body);
      expect(res.status).toBe(422);
      expect(res.statusText).toBe('Extending needs a new pairing');
      expect(await json(res)).toMatchObject({ ok: false, code: 'reduction_only' });
      await relay.loop.drain();
      expect(relay.loop.lastSeq).toBe(before);
      a.phone.close();
    });

    it('refuses to change another device’s session (403, as the reference relay and the spec), even to shorten it', async () => {
      const a = await pairPhone(relay);
      const b = await pairPhone(relay);
      const before = relay.loop.lastSeq;
      const res = await patch(a.token, b.prefix, { ttl_seconds: 60 });
      expect(res.status).toBe(403);
      expect(await json(res)).toMatchObject({ ok: false, code: 'sessions.not_yours', error: expect.stringContaining('only its own session') });
      await relay.loop.drain();
      expect(relay.loop.lastSeq).toBe(before);
      a.phone.close();
      b.phone.close();
    });

    it('a never-expiring session may be given a finite lifetime, and may stay never', async () => {
      const a = await pairPhone(relay, { terms: { ttl_seconds: 0 } });
      expect((await patch(a.token, a.prefix, { ttl_seconds: 0 })).status).toBe(200);
      const res = await patch(a.token, a.prefix, { ttl_seconds: 7 * DAY });
      expect((await json(res)).expires_at).toBe(now() + 7 * DAY);
      expect((await patch(a.token, a.prefix, { ttl_seconds: 0 })).status).toBe(422);
      a.phone.close();
    });

    it('an unknown prefix is a 404', async () => {
      const a = await pairPhone(relay);
      expect((await patch(a.token, a.prefix.startsWith('qqqq') ? 'wwww' : 'qqqq', { ttl_seconds: 60 })).status).toBe(404);
      a.phone.close();
    });

    it('a session shortened to a minute expires a minute later', async () => {
      const a = await pairPhone(relay);
      await patch(a.token, a.prefix, { ttl_seconds: 60 });
      relay.clock.advanceSeconds(61);
      await relay.sweep();
      expect(await a.phone.closed).toBe(4403);
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(401);
    });
  });

  describe('expiry', () => {
    it('a session expires at its lifetime: socket told and closed, token refused, event written', async () => {
      const a = await pairPhone(relay, { terms: { ttl_seconds: DAY } });
      const keep = await pairPhone(relay);
      relay.clock.advanceSeconds(DAY - 1);
      await relay.sweep();
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(200);
      relay.clock.advanceSeconds(1);
      await relay.sweep();
      expect((await a.phone.type('system', 'session.revoked')).payload).toMatchObject({ reason: 'expired' });
      expect(await a.phone.closed).toBe(4403);
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(401);
      expect(readEvents(relay.home).filter((e) => e.type === 'session.expired')).toEqual([
        expect.objectContaining({ data: { tokenPrefix: a.prefix } }),
      ]);
      expect((await list(keep.token)).map((s) => s.token_prefix)).toEqual([keep.prefix]);
      keep.phone.close();
    });

    it('an expired token is refused even before the sweep runs', async () => {
      const a = await pairPhone(relay, { terms: { ttl_seconds: 60 } });
      a.phone.close();
      relay.clock.advance(60_000);
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(401);
    });

    it('a grant expires on its own: gone from the listing, the channel refused, the session lives on', async () => {
      const a = await pairPhone(relay, { terms: { grants: { bridge: '1h' } } });
      relay.clock.advanceSeconds(3600);
      await relay.sweep();
      const [s] = await list(a.token);
      expect(s.grants.bridge).toBeUndefined();
      expect(s.grants.chat).toBeDefined();
      a.phone.send('bridge', 'bridge.status', {}, 'b1');
      expect((await a.phone.next((f) => f.id === 'b1')).payload).toMatchObject({ code: 'grant_required', channel: 'bridge' });
      expect(readEvents(relay.home).filter((e) => e.type === 'session.grant_expired')).toEqual([
        expect.objectContaining({ data: { tokenPrefix: a.prefix, channel: 'bridge' } }),
      ]);
      a.phone.close();
    });
  });

  describe('restart', () => {
    it('sessions survive a restart with the same fields; tokens still work over HTTP and WebSocket', async () => {
      const a = await pairPhone(relay, { terms: { ttl_seconds: 7 * DAY, grants: { bridge: '1d' } }, device: { device_id: 'a' } });
      const b = await pairPhone(relay, { device: { device_id: 'b' } });
      const before = await list(a.token);
      a.phone.close();
      b.phone.close();
      relay = await relay.restart();
      const after = await list(a.token);
      const strip = (xs: SessionJson[]) => xs.map(({ last_seen: _l, ...rest }) => ({ ...rest, online: false }));
      expect(strip(after)).toEqual(strip(before));
      const phone = await Phone.connect(relay.url);
      const ok = await phone.auth({ session_token: b.token });
      expect(ok.type).toBe('auth.ok');
      expect(ok.payload.expires_at).toBe(before.find((s) => s.token_prefix === b.prefix)!.expires_at);
      phone.close();
    });

    it('a revoked token never works again, also after a restart', async () => {
      const a = await pairPhone(relay);
      const b = await pairPhone(relay);
      await del(a.token, b.prefix);
      a.phone.close();
      relay = await relay.restart();
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(b.token) })).status).toBe(401);
      const p = await Phone.connect(relay.url);
      expect((await p.auth({ session_token: b.token })).type).toBe('auth.fail');
      expect((await list(a.token)).map((s) => s.token_prefix)).toEqual([a.prefix]);
    });

    it('an expired token never works again after a restart, even if the relay was down when it expired', async () => {
      const a = await pairPhone(relay, { terms: { ttl_seconds: 3600 } });
      const keep = await pairPhone(relay, { terms: { ttl_seconds: 0 } });
      a.phone.close();
      keep.phone.close();
      await relay.close();
      relay.clock.advanceSeconds(7200);
      relay = await startRelay({ home: relay.home, clock: relay.clock });
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(401);
      await relay.sweep();
      expect(readEvents(relay.home).filter((e) => e.type === 'session.expired')).toHaveLength(1);
      relay = await relay.restart();
      expect((await fetch(`${relay.url}/sessions`, { headers: bearer(a.token) })).status).toBe(401);
      expect((await list(keep.token)).map((s) => s.token_prefix)).toEqual([keep.prefix]);
    });

    it('with its snapshots deleted, the relay replays the whole log to the same sessions', async () => {
      const a = await pairPhone(relay, { device: { device_id: 'a' } });
      const b = await pairPhone(relay, { device: { device_id: 'b' } });
      await patch(a.token, a.prefix, { grants: { bridge: '2h' } });
      await del(a.token, b.prefix);
      await relay.loop.drain();
      const live = relay.loop.models.sessions.snapshot();
      a.phone.close();
      await a.phone.closed;
      await relay.close();
      fs.rmSync(path.join(relay.home, 'relay', 'snapshots'), { recursive: true, force: true });
      relay = await startRelay({ home: relay.home, clock: relay.clock });
      expect(relay.loop.models.sessions.snapshot()).toEqual(live);
      expect((await list(a.token)).map((s) => s.token_prefix)).toEqual([a.prefix]);
    });
  });
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
