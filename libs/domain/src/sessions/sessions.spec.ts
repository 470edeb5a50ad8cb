import { at, given, Given } from '../../../../test/support/given';
import { DAY } from '../durations';
import { grantDurations } from '../grants';
import { consumeCode, registerCode } from '../pairing/pairing';
import type { Principal } from '../principal';
import type { ReadModels } from '../read-models';
import { hasGrant, liveAt, liveGrants, wireLiveGrants } from './sessions.projection';
import { abandonSession, expireSessions, findByPrefix, markSeen, revokeSession, shortenSession, type ShortenInput } from './sessions';

const T0 = new Date('2026-03-01T00:00:00.000Z');
const ms = (d: Date) => d.getTime();

/** A relay state with sessions whose token prefixes we choose. */
function withSessions(prefixes: string[], terms: { ttl?: number | null; grants?: Record<string, number | null | false> } = {}): Given {
  const g = new Given();
  prefixes.forEach((prefix, i) => {
    g.when(
      (m, now) =>
        registerCode(
          m,
          {
            codeDigest: `code-${i}`,
            source: 'register',
            terms: { sessionTtlSeconds: terms.ttl === undefined ? 30 * DAY : terms.ttl, grants: grantDurations(terms.grants), transportHint: null },
          },
          now,
        ),
      T0,
    );
    g.when(
      (m, now) =>
        consumeCode(
          m,
          {
            codeDigest: `code-${i}`,
            tokenDigest: `digest-${prefix}`,
            tokenPrefix: prefix,
            device: { deviceId: `dev-${i}`, deviceName: `D${i}`, deviceModel: null, devicePlatform: null },
            ip: '10.0.0.1',
          },
          now,
        ),
      T0,
    );
  });
  return g;
}
const device = (prefix: string): Principal => ({ kind: 'device', tokenPrefix: prefix, deviceId: 'x', deviceName: 'x' });

describe('sessions rules', () => {
  describe('prefix matching', () => {
    const g = withSessions(['abcd1111', 'abcd2222', 'wxyz9999']);

    it('needs at least 4 characters (400)', () => {
      for (const p of ['', 'a', 'abc'])
        expect(() => findByPrefix(g.models, p, T0)).toThrow(expect.objectContaining({ code: 'sessions.prefix_too_short', kind: 'invalid' }));
    });

    it('finds exactly one match from 4 characters up to the whole prefix', () => {
      expect(findByPrefix(g.models, 'wxyz', T0).tokenPrefix).toBe('wxyz9999');
      expect(findByPrefix(g.models, 'abcd1', T0).tokenPrefix).toBe('abcd1111');
      expect(findByPrefix(g.models, 'abcd2222', T0).tokenPrefix).toBe('abcd2222');
    });

    it('404 on no match (also a longer string than any prefix), 409 on several, with the count', () => {
      expect(() => findByPrefix(g.models, 'zzzz', T0)).toThrow(expect.objectContaining({ code: 'sessions.not_found', kind: 'not_found' }));
      expect(() => findByPrefix(g.models, 'abcd11111', T0)).toThrow(expect.objectContaining({ kind: 'not_found' }));
      expect(() => findByPrefix(g.models, 'abcd', T0)).toThrow(
        expect.objectContaining({ code: 'sessions.ambiguous_prefix', kind: 'conflict', extra: { matches: 2 } }),
      );
    });

    it('is case-sensitive (tokens are base64url)', () => {
      expect(() => findByPrefix(g.models, 'WXYZ', T0)).toThrow(expect.objectContaining({ kind: 'not_found' }));
    });

    it('ignores expired sessions: an old namesake does not make a prefix ambiguous', () => {
      const h = withSessions(['abcd1111'], { ttl: 60 });
      const later = at(T0, 120);
      expect(() => findByPrefix(h.models, 'abcd', later)).toThrow(expect.objectContaining({ kind: 'not_found' }));
    });
  });

  describe('revoke', () => {
    it('flags self-revoke, names the actor, and the session leaves the model', () => {
      const g = withSessions(['abcd1111', 'wxyz9999']);
      const [e] = g.when((m, now) => revokeSession(m, 'abcd', device('abcd1111'), now), T0);
      expect(e).toMatchObject({ type: 'session.revoked', data: { tokenPrefix: 'abcd1111', by: 'device:abcd1111', self: true, reason: 'revoked' } });
      expect(g.models.sessions.byTokenPrefix('abcd1111')).toBeUndefined();
      expect(g.models.sessions.byToken('digest-abcd1111', T0)).toBeUndefined();
      const [o] = g.when((m, now) => revokeSession(m, 'wxyz', { kind: 'operator' }, now), T0);
      expect(o.data).toMatchObject({ by: 'operator', self: false });
    });

    it('an abandoned pairing is revoked by the system, once; a gone session writes nothing', () => {
      const g = withSessions(['abcd1111']);
      given(g)
        .when((m) => abandonSession(m, 'abcd1111'), T0)
        .then([{ type: 'session.revoked', data: { tokenPrefix: 'abcd1111', by: 'system', self: false, reason: 'abandoned' } }]);
      expect(g.models.sessions.byTokenPrefix('abcd1111')).toBeUndefined();
      given(g)
        .when((m) => abandonSession(m, 'abcd1111'), T0)
        .then([]);
    });

    it('any device may revoke another', () => {
      given(withSessions(['abcd1111', 'wxyz9999']))
        .when((m, now) => revokeSession(m, 'wxyz9', device('abcd1111'), now), T0)
        .then([{ type: 'session.revoked', data: { tokenPrefix: 'wxyz9999', by: 'device:abcd1111', self: false, reason: 'revoked' } }]);
    });
  });

  describe('shorten: reduction only', () => {
    const shortening =
      (input: ShortenInput, caller = device('abcd1111')) =>
      (m: ReadModels, t: Date) =>
        shortenSession(m, 'abcd1111', caller, input, t);
    const shorten = (g: Given, input: ShortenInput, caller = device('abcd1111'), now = T0) => g.when(shortening(input, caller), now);

    it('shortens the lifetime and clamps every grant to it', () => {
      const g = withSessions(['abcd1111']);
      const [e] = shorten(g, { ttl_seconds: 3600 });
      const until = at(T0, 3600).toISOString();
      expect(e.data).toMatchObject({ tokenPrefix: 'abcd1111', expiresAt: until });
      for (const v of Object.values((e.data as { grants: Record<string, string> }).grants)) expect(v).toBe(until);
    });

    it('shortening to exactly the current expiry is allowed (not an extension)', () => {
      const g = withSessions(['abcd1111']);
      expect(() => shorten(g, { ttl_seconds: 30 * DAY })).not.toThrow();
    });

    it('shortens one grant and drops another with false or null', () => {
      const g = withSessions(['abcd1111']);
      const [e] = shorten(g, { grants: { terminal: '1h', bridge: false, tui: null } });
      const grants = (e.data as { grants: Record<string, string | null> }).grants;
      expect(grants.terminal).toBe(at(T0, 3600).toISOString());
      expect('bridge' in grants).toBe(false);
      expect('tui' in grants).toBe(false);
      expect(grants.chat).toBe(at(T0, 30 * DAY).toISOString());
    });

    it.each<[string, ShortenInput]>([
      ['a longer lifetime', { ttl_seconds: 31 * DAY }],
      ['never expire', { ttl_seconds: 0 }],
      ['a longer grant', { grants: { bridge: '8d' } }],
      ['a never grant', { grants: { bridge: 'never' } }],
      ['a grant it lacks', { grants: { desktop: 60 } }],
    ])('refuses %s with reduction_only (422, needs a new pairing)', (_l, input) => {
      given(withSessions(['abcd1111'], { grants: { desktop: false } }))
        .when(shortening(input), T0)
        .thenThrows('reduction_only', 'needs_pairing');
    });

    it('refuses another device’s session, but the operator may shorten any', () => {
      const g = withSessions(['abcd1111', 'wxyz9999']);
      given(g)
        .when(shortening({ ttl_seconds: 60 }, device('wxyz9999')), T0)
        .thenThrows('sessions.not_yours', 'forbidden');
      expect(shorten(g, { ttl_seconds: 60 }, { kind: 'operator' })).toHaveLength(1);
    });

    it('refuses an empty change and bad values', () => {
      const g = given(withSessions(['abcd1111']));
      g.when(shortening({}), T0).thenThrows('validation.empty');
      g.when(shortening({ grants: { nope: 60 } }), T0).thenThrows('validation.grant_channel');
      g.when(shortening({ grants: { chat: {} } }), T0).thenThrows('validation.grant');
      g.when(shortening({ ttl_seconds: -1 }), T0).thenThrows('validation.duration');
    });

    it('a never-expiring session may become finite, may stay never; grants of "session length" follow it', () => {
      const g = withSessions(['abcd1111'], { ttl: null });
      // Staying never is allowed and changes nothing, so it writes nothing.
      expect(shorten(g, { ttl_seconds: 0 })).toEqual([]);
      const [e] = shorten(g, { ttl_seconds: DAY });
      expect((e.data as { grants: Record<string, string | null> }).grants.chat).toBe(at(T0, DAY).toISOString());
      expect(() => shorten(g, { ttl_seconds: 0 })).toThrow(expect.objectContaining({ code: 'reduction_only' }));
    });

    it('an expired grant cannot be "shortened" back to life', () => {
      const g = withSessions(['abcd1111'], { grants: { bridge: 60 } });
      expect(() => shorten(g, { grants: { bridge: 30 } }, device('abcd1111'), at(T0, 120))).toThrow(
        expect.objectContaining({ code: 'reduction_only' }),
      );
    });
  });

  describe('expiry sweep', () => {
    it('expires sessions at (not after) their lifetime, and grants on their own', () => {
      const g = withSessions(['abcd1111'], { ttl: DAY, grants: { bridge: 3600 } });
      const sweep = given(g);
      sweep.when(expireSessions, at(T0, 3599)).then([]);
      sweep.when(expireSessions, at(T0, 3600)).then([{ type: 'session.grant_expired', data: { tokenPrefix: 'abcd1111', channel: 'bridge' } }]);
      const s = g.models.sessions.byTokenPrefix('abcd1111')!;
      expect(hasGrant(s, 'bridge', at(T0, 3600))).toBe(false);
      expect(hasGrant(s, 'chat', at(T0, 3600))).toBe(true);
      // Idempotent: nothing more until the session itself is due.
      sweep.when(expireSessions, at(T0, 3700)).then([]);
      sweep.when(expireSessions, at(T0, DAY)).then([{ type: 'session.expired', data: { tokenPrefix: 'abcd1111' } }]);
      expect(g.models.sessions.count(at(T0, DAY))).toBe(0);
      sweep.when(expireSessions, at(T0, 2 * DAY)).then([]);
    });

    it('a never-expiring session never expires', () => {
      const g = withSessions(['abcd1111'], { ttl: null });
      expect(g.when(expireSessions, at(T0, 100 * 365 * DAY)).filter((e) => e.type === 'session.expired')).toEqual([]);
    });

    it('byToken refuses an expired session even before the sweep', () => {
      const g = withSessions(['abcd1111'], { ttl: 60 });
      expect(g.models.sessions.byToken('digest-abcd1111', at(T0, 59))).toBeDefined();
      expect(g.models.sessions.byToken('digest-abcd1111', at(T0, 60))).toBeUndefined();
    });
  });

  describe('live grants', () => {
    it('an expiry holds until its instant, not at it; null never ends', () => {
      expect(liveAt(ms(T0) + 1, T0)).toBe(true);
      expect(liveAt(ms(T0), T0)).toBe(false);
      expect(liveAt(ms(T0) - 1, T0)).toBe(false);
      expect(liveAt(null, at(T0, 100 * 365 * DAY))).toBe(true);
    });

    it('the grants live at `now`, with their expiries, before the sweep has removed the expired ones', () => {
      const grants = { chat: null, bridge: ms(at(T0, 3600)), tui: ms(at(T0, 60)) };
      expect(liveGrants({ grants }, T0)).toEqual(grants);
      expect(liveGrants({ grants }, at(T0, 60))).toEqual({ chat: null, bridge: ms(at(T0, 3600)) });
      expect(liveGrants({ grants }, at(T0, 3600))).toEqual({ chat: null });
      expect(liveGrants({ grants: {} }, T0)).toEqual({});
    });

    it('on the wire (GET /sessions, auth.ok): the same live grants in whole epoch seconds, null kept', () => {
      const grants = { chat: null, bridge: ms(at(T0, 3600)) + 999, tui: ms(at(T0, 60)) };
      expect(wireLiveGrants({ grants }, at(T0, 60))).toEqual({ chat: null, bridge: ms(at(T0, 3600)) / 1000 });
    });

    it('agrees with hasGrant and the sweep on a paired session', () => {
      const g = withSessions(['abcd1111'], { grants: { bridge: 3600 } });
      const s = g.models.sessions.byTokenPrefix('abcd1111')!;
      for (const t of [0, 3599, 3600, 7200]) {
        const now = at(T0, t);
        const live = Object.keys(liveGrants(s, now));
        expect(live).toEqual(Object.keys(s.grants).filter((ch) => hasGrant(s, ch, now)));
        const expired = Object.keys(s.grants).filter((ch) => !live.includes(ch));
        const swept = g.when(expireSessions, now).flatMap((e) => (e.type === 'session.grant_expired' ? [e.data.channel] : []));
        expect(swept).toEqual(expired);
      }
    });
  });

  it('last-seen is written at most once a minute', () => {
    const g = withSessions(['abcd1111']);
    expect(g.when((m, now) => markSeen(m, 'abcd1111', '1.2.3.4', 'http', now), at(T0, 59))).toEqual([]);
    expect(g.when((m, now) => markSeen(m, 'abcd1111', '1.2.3.4', 'http', now), at(T0, 60))).toHaveLength(1);
    expect(g.models.sessions.byTokenPrefix('abcd1111')!.lastSeen).toBe(ms(at(T0, 60)));
    expect(g.when((m, now) => markSeen(m, 'abcd1111', '1.2.3.4', 'http', now), at(T0, 100))).toEqual([]);
    expect(g.when((m, now) => markSeen(m, 'gone0000', '1.2.3.4', 'http', now), at(T0, 1000))).toEqual([]);
    // A session past its lifetime (not yet swept) is not "seen".
    const h = withSessions(['abcd1111'], { ttl: 120 });
    expect(h.when((m, now) => markSeen(m, 'abcd1111', '1.2.3.4', 'ws', now), at(T0, 120))).toEqual([]);
  });
});
