import type { PairingTerms } from '@svc/events';
import { pairingCodeRegistered } from '../../../../test/support/events';
import { at, given, Given, type ExpectedEvent } from '../../../../test/support/given';
import { DAY } from '../durations';
import { grantDurations } from '../grants';
import type { ReadModels } from '../read-models';
import { recordAuthFailure } from '../rate-limit/rate-limit';
import type { DomainError } from '../errors';
import { approvePairing, CODE_REFUSALS, consumeCode, denyPairing, expireCodes, registerCode, requestPairing, type PairingChoices } from './pairing';
import { ENDED_CODES_KEPT, PairingProjection } from './pairing.projection';

const T0 = new Date('2026-03-01T00:00:00.000Z');
const TERMS = { sessionTtlSeconds: 30 * DAY, grants: grantDurations(undefined), transportHint: null };
const device = (id: string) => ({ deviceId: id, deviceName: id, deviceModel: null, devicePlatform: null });

describe('pairing rules', () => {
  const registering = (digest: string) => (m: ReadModels, t: Date) => registerCode(m, { codeDigest: digest, source: 'register', terms: TERMS }, t);
  const consuming =
    (digest: string, prefix: string, deviceId = `d-${prefix}`) =>
    (m: ReadModels, t: Date) =>
      consumeCode(m, { codeDigest: digest, tokenDigest: `t-${prefix}`, tokenPrefix: prefix, device: device(deviceId), ip: '1.2.3.4' }, t);
  const register = (g: Given, digest: string, now = T0) => g.when(registering(digest), now);
  const consume = (g: Given, digest: string, prefix: string, now = T0, deviceId = `d-${prefix}`) => g.when(consuming(digest, prefix, deviceId), now);

  it('a registered code lives 10 minutes and is consumed once into a session with clamped grants', () => {
    const g = new Given();
    expect(register(g, 'c1')[0].data).toMatchObject({ codeDigest: 'c1', expiresAt: at(T0, 600).toISOString() });
    const out = consume(g, 'c1', 'pppp0001', at(T0, 599));
    expect(out.map((e) => e.type)).toEqual(['pairing.code_consumed', 'session.created']);
    expect(out[1].data).toMatchObject({ tokenPrefix: 'pppp0001', expiresAt: at(T0, 599 + 30 * DAY).toISOString() });
    given(g).when(consuming('c1', 'pppp0002'), at(T0, 599)).thenThrows('auth.invalid_credentials', 'unauthorized');
  });

  describe('a refused code says which it was (PROTOCOL.md, Pairing): the phone is told what to do next', () => {
    const refusal = (g: Given, digest: string, now: Date) => {
      try {
        consume(g, digest, 'pppp0009', now);
      } catch (err) {
        return err as DomainError;
      }
      throw new Error('the code paired');
    };

    it('used, expired (before and after the sweep), unknown; each the same code and kind', () => {
      const g = new Given();
      register(g, 'used');
      consume(g, 'used', 'pppp0001');
      register(g, 'swept');
      g.when(expireCodes, at(T0, 600));
      const seen = {
        used: refusal(g, 'used', at(T0, 1)),
        expiredSwept: refusal(g, 'swept', at(T0, 601)),
        unknown: refusal(g, 'never', at(T0, 1)),
      };
      const g2 = new Given();
      register(g2, 'late');
      const expiredUnswept = refusal(g2, 'late', at(T0, 600));
      for (const e of [...Object.values(seen), expiredUnswept]) expect(e).toMatchObject({ code: 'auth.invalid_credentials', kind: 'unauthorized' });
      expect(seen.used).toMatchObject({ message: CODE_REFUSALS.used, extra: { code_state: 'used' } });
      expect(seen.expiredSwept).toMatchObject({ message: CODE_REFUSALS.expired, extra: { code_state: 'expired' } });
      expect(expiredUnswept).toMatchObject({ message: CODE_REFUSALS.expired, extra: { code_state: 'expired' } });
      expect(seen.unknown).toMatchObject({ message: CODE_REFUSALS.unknown, extra: { code_state: 'unknown' } });
      expect(CODE_REFUSALS.expired).toMatch(/mint a new one/);
    });

    it('a denied request says so', () => {
      const g = new Given();
      g.when(
        (m, t) => requestPairing(m, { codeDigest: 'pub', requestId: '00000000-0000-0000-0000-0000000000d1', ip: 'ip', deviceName: null }, t),
        T0,
      );
      g.when((m, t) => denyPairing(m, { codeDigest: 'pub' }, t), T0);
      expect(refusal(g, 'pub', T0)).toMatchObject({ message: CODE_REFUSALS.denied, extra: { code_state: 'denied' } });
    });

    it(`remembers the last ${ENDED_CODES_KEPT} ended codes, oldest forgotten first (then: unknown), across a snapshot`, () => {
      const g = new Given();
      for (let i = 0; i <= ENDED_CODES_KEPT; i++) {
        register(g, `c${i}`);
        consume(g, `c${i}`, `p${String(i).padStart(7, '0')}`, T0, 'one-device');
      }
      expect(refusal(g, 'c0', T0).extra).toEqual({ code_state: 'unknown' });
      expect(refusal(g, 'c1', T0).extra).toEqual({ code_state: 'used' });
      const copy = new PairingProjection();
      copy.restore(JSON.parse(JSON.stringify(g.models.pairing.snapshot())));
      expect([copy.ended('c0'), copy.ended('c1'), copy.ended(`c${ENDED_CODES_KEPT}`)]).toEqual([undefined, 'used', 'used']);
      const old = new PairingProjection();
      old.restore({ codes: [] }); // a snapshot from before ended codes were kept
      expect(old.ended('c1')).toBeUndefined();
    });
  });

  it('an expired code fails at its expiry, before and after the sweep', () => {
    const g = new Given();
    register(g, 'c1');
    expect(() => consume(g, 'c1', 'pppp0001', at(T0, 600))).toThrow(expect.objectContaining({ kind: 'unauthorized' }));
    expect(g.when(expireCodes, at(T0, 599))).toEqual([]);
    expect(g.when(expireCodes, at(T0, 600)).map((e) => e.type)).toEqual(['pairing.code_expired']);
    expect(g.when(expireCodes, at(T0, 700))).toEqual([]);
  });

  it('a live code cannot be registered twice (409); an expired one can, after its expiry is written', () => {
    const g = new Given();
    register(g, 'c1');
    given(g).when(registering('c1'), at(T0, 599)).thenThrows('pairing.code_exists', 'conflict');
    const out = register(g, 'c1', at(T0, 600));
    expect(out.map((e) => e.type)).toEqual(['pairing.code_expired', 'pairing.code_registered']);
  });

  it('registering clears all rate-limit blocks in the same decision', () => {
    const g = new Given();
    for (let i = 0; i < 5; i++) g.when((m, t) => recordAuthFailure(m.rateLimit, { ip: 'x', kind: 'token', via: 'http', reason: 'r' }, t), T0);
    given(g)
      .when(registering('c1'), T0)
      .then([
        { type: 'pairing.code_registered', data: { codeDigest: 'c1', source: 'register', expiresAt: at(T0, 600).toISOString(), terms: TERMS } },
        { type: 'ratelimit.cleared', data: { ip: null, reason: 'pairing code registered (register)' } },
      ]);
  });

  it('re-pairing with the same device id revokes the older session; an empty id replaces nobody', () => {
    const g = new Given();
    register(g, 'c1');
    register(g, 'c2');
    register(g, 'c3');
    register(g, 'c4');
    consume(g, 'c1', 'pppp0001', T0, 'phone');
    const out = consume(g, 'c2', 'pppp0002', T0, 'phone');
    expect(out.map((e) => [e.type, (e.data as { tokenPrefix?: string }).tokenPrefix])).toEqual([
      ['pairing.code_consumed', 'pppp0002'],
      ['session.revoked', 'pppp0001'],
      ['session.created', 'pppp0002'],
    ]);
    consume(g, 'c3', 'pppp0003', T0, '');
    consume(g, 'c4', 'pppp0004', T0, '');
    expect(g.models.sessions.count(T0)).toBe(3);
  });

  it('refuses a token-prefix collision instead of overwriting a session', () => {
    const g = new Given();
    register(g, 'c1');
    register(g, 'c2');
    consume(g, 'c1', 'pppp0001');
    given(g).when(consuming('c2', 'pppp0001'), T0).thenThrows('auth.token_collision');
  });

  describe("the phone's choices at pairing", () => {
    // The code grants a day, `chat` for the session and `terminal` for an hour; `desktop` is not granted.
    const CODE_TERMS: PairingTerms = { sessionTtlSeconds: DAY, grants: { chat: null, terminal: 3600 }, transportHint: null };
    const coded = (terms = CODE_TERMS) => given([pairingCodeRegistered({ codeDigest: 'c1', expiresAt: at(T0, 600).toISOString(), terms })], T0);
    const choosing = (choices: PairingChoices) => (m: ReadModels, t: Date) =>
      consumeCode(m, { codeDigest: 'c1', tokenDigest: 't-p', tokenPrefix: 'pppp0001', device: device('phone'), ip: '1.2.3.4', choices }, t);
    const paired = (expiresAt: string | null, grants: Record<string, string | null>): ExpectedEvent[] => [
      { type: 'pairing.code_consumed', data: { codeDigest: 'c1', tokenPrefix: 'pppp0001', deviceId: 'phone' } },
      {
        type: 'session.created',
        data: { tokenDigest: 't-p', tokenPrefix: 'pppp0001', ...device('phone'), transportHint: null, expiresAt, grants, ip: '1.2.3.4' },
      },
    ];
    const iso = (seconds: number) => at(T0, seconds).toISOString();

    it('cap what the code grants: a longer lifetime or grant, or a grant the code never gave, gets the code’s terms', () => {
      coded()
        .when(choosing({ ttlSeconds: 2 * DAY, grants: { terminal: 7200, desktop: 60 } }), T0)
        .then(paired(iso(DAY), { chat: iso(DAY), terminal: iso(3600) }));
    });

    it('shorten what the code grants: each the shorter of the two, a grant no longer than the session', () => {
      coded()
        .when(choosing({ ttlSeconds: 600, grants: { chat: 300, terminal: 60 } }), T0)
        .then(paired(iso(600), { chat: iso(300), terminal: iso(60) }));
      coded()
        .when(choosing({ ttlSeconds: 1800 }), T0)
        .then(paired(iso(1800), { chat: iso(1800), terminal: iso(1800) }));
    });

    it('"never" and "as long as the session" narrow nothing; a code that never expires takes the phone’s lifetime', () => {
      coded()
        .when(choosing({ ttlSeconds: null, grants: { terminal: null } }), T0)
        .then(paired(iso(DAY), { chat: iso(DAY), terminal: iso(3600) }));
      coded({ sessionTtlSeconds: null, grants: { chat: null, terminal: null }, transportHint: null })
        .when(choosing({ ttlSeconds: 600, grants: { terminal: 60 } }), T0)
        .then(paired(iso(600), { chat: iso(600), terminal: iso(60) }));
    });
  });

  describe('public requests', () => {
    const request = (g: Given, ip: string, n: number, now = T0) =>
      g.when(
        (m, t) =>
          requestPairing(
            m,
            { codeDigest: `pub-${ip}-${n}`, requestId: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`, ip, deviceName: null },
            t,
          ),
        now,
      );

    it('stays pending (auth refused with pending_approval) until approved; approval carries the terms', () => {
      const g = new Given();
      request(g, 'ip', 1);
      expect(() => consume(g, 'pub-ip-1', 'pppp0001')).toThrow(expect.objectContaining({ code: 'auth.pending_approval' }));
      const approve = (m: ReadModels, t: Date) => approvePairing(m, { codeDigest: 'pub-ip-1' }, { ...TERMS, sessionTtlSeconds: DAY }, t);
      g.when(approve, T0);
      // Approved once: it is usable now, not pending.
      given(g).when(approve, T0).thenThrows('pairing.not_pending', 'conflict');
      expect(consume(g, 'pub-ip-1', 'pppp0001')[1].data).toMatchObject({ expiresAt: at(T0, DAY).toISOString() });
    });

    it('approve and deny need a live pending request (404 unknown/expired, 409 not pending)', () => {
      const g = new Given();
      request(g, 'ip', 1);
      register(g, 'host');
      expect(() => g.when((m, t) => approvePairing(m, { codeDigest: 'nope' }, TERMS, t), T0)).toThrow(
        expect.objectContaining({ code: 'pairing.not_found', kind: 'not_found' }),
      );
      expect(() => g.when((m, t) => approvePairing(m, { codeDigest: 'host' }, TERMS, t), T0)).toThrow(
        expect.objectContaining({ code: 'pairing.not_pending', kind: 'conflict' }),
      );
      expect(() => g.when((m, t) => denyPairing(m, { requestId: '00000000-0000-0000-0000-000000000001' }, t), at(T0, 600))).toThrow(
        expect.objectContaining({ code: 'pairing.not_found', kind: 'not_found' }),
      );
      g.when((m, t) => denyPairing(m, { requestId: '00000000-0000-0000-0000-000000000001' }, t), T0);
      expect(() => consume(g, 'pub-ip-1', 'pppp0001')).toThrow(expect.objectContaining({ code: 'auth.invalid_credentials' }));
    });

    it('a request whose code digest is already known is refused (409): neither a host code nor a pending request is taken over', () => {
      const g = new Given();
      register(g, 'host');
      request(g, 'ip', 1);
      const colliding = (codeDigest: string) => (m: ReadModels, t: Date) =>
        requestPairing(m, { codeDigest, requestId: '00000000-0000-0000-0000-000000000002', ip: 'other', deviceName: null }, t);
      for (const digest of ['host', 'pub-ip-1']) given(g).when(colliding(digest), T0).thenThrows('pairing.code_exists', 'conflict');
    });

    // PROTOCOL.md "Error codes": 429 `pairing.too_many_requests` at 5 pending from an address, 503
    // `pairing.pending_full` when 20 wait.
    it('at most 5 pending per address over its 10 minutes and 20 in all (host codes aside); a blocked address is refused', () => {
      const g = new Given();
      register(g, 'host-1');
      register(g, 'host-2');
      for (let i = 0; i < 5; i++) request(g, 'a', i, at(T0, i * 60));
      const sixth = given(g)
        .when(
          (m, t) => requestPairing(m, { codeDigest: 'pub-a-5', requestId: '00000000-0000-0000-0000-000000000005', ip: 'a', deviceName: null }, t),
          at(T0, 300),
        )
        .thenThrows('pairing.too_many_requests', 'rate_limited');
      expect(sixth.extra).toEqual({ retry_after: 600 });
      for (let i = 0; i < 20 - 5; i++) request(g, `ip${i}`, 100 + i, at(T0, 300));
      expect(() => request(g, 'fresh', 999, at(T0, 300))).toThrow(expect.objectContaining({ code: 'pairing.pending_full', kind: 'unavailable' }));
      const h = new Given();
      for (let i = 0; i < 10; i++) h.when((m, t) => recordAuthFailure(m.rateLimit, { ip: 'bad', kind: 'code', via: 'ws', reason: 'r' }, t), T0);
      expect(() => request(h, 'bad', 1)).toThrow(expect.objectContaining({ code: 'auth.rate_limited', kind: 'rate_limited' }));
    });
  });
});
