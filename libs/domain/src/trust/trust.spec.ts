import { sessionCreated } from '../../../../test/support/events';
import { given, Given } from '../../../../test/support/given';
import { DAY } from '../durations';
import { grantDurations } from '../grants';
import { consumeCode, registerCode } from '../pairing/pairing';
import { ReadModels } from '../read-models';
import { expireSessions, revokeSession } from '../sessions/sessions';
import { RETIRED_PER_TRUST } from './trust.projection';
import { abandonRenewal, endDeviceTrust, endTrust, expireTrusts, reconnectTrust, renewTrust, type TrustPolicy } from './trust';

const T0 = new Date('2026-03-01T00:00:00.000Z');
const POLICY: TrustPolicy = { ttlMs: 180 * DAY * 1000 };
const device = (deviceId: string) => ({ deviceId, deviceName: 'Pixel', deviceModel: null, devicePlatform: null });
const later = (ms: number) => new Date(T0.getTime() + ms);

/** A device paired with a one-hour session and its first refresh token `r0`. */
function paired(policy = POLICY, deviceId = 'dev'): Given {
  const g = new Given();
  g.when(
    (m, now) =>
      registerCode(
        m,
        { codeDigest: 'c', source: 'register', terms: { sessionTtlSeconds: 3600, grants: grantDurations({ terminal: 600 }), transportHint: null } },
        now,
      ),
    T0,
  );
  g.when(
    (m, now) =>
      consumeCode(
        m,
        {
          codeDigest: 'c',
          tokenDigest: 's0',
          tokenPrefix: 'p0000000',
          device: device(deviceId),
          ip: '10.0.0.1',
          trust: { issue: { trustId: 't1', refreshDigest: 'r0' }, policy },
        },
        now,
      ),
    T0,
  );
  return g;
}

/** The phone presents its refresh token beside the session token it holds (`s0` from the pairing, `s-<prefix>` after a renewal). */
const renewing =
  (refreshDigest: string, next: string, prefix: string, deviceId = 'dev', sessionDigest?: string | null, policy = POLICY) =>
  (m: ReadModels, now: Date) =>
    renewTrust(
      m,
      {
        refreshDigest,
        sessionDigest: sessionDigest === undefined ? (m.trust.byRefreshDigest(refreshDigest)?.tokenDigest ?? null) : sessionDigest,
        next: { trustId: 'unused', refreshDigest: next },
        tokenDigest: `s-${prefix}`,
        tokenPrefix: prefix,
        device: device(deviceId),
        ip: '10.0.0.2',
        transport: 'ws',
      },
      policy,
      now,
    );
const renew = (g: Given, refreshDigest: string, next: string, prefix: string, at: Date, deviceId = 'dev', sessionDigest?: string | null) =>
  g.when(renewing(refreshDigest, next, prefix, deviceId, sessionDigest), at);

describe('trusted-device renewal rules', () => {
  it('a pairing issues a trust with the terms it gave; pairing the device again replaces it', () => {
    const g = paired();
    expect(g.log.at(-1)).toMatchObject({ type: 'trust.issued', data: { trustId: 't1', deviceId: 'dev', reason: 'paired' } });
    expect(g.models.trust.forDevice('dev')!.terms.sessionTtlSeconds).toBe(3600);
    g.when((m, now) =>
      registerCode(m, { codeDigest: 'c2', source: 'register', terms: { sessionTtlSeconds: 60, grants: {}, transportHint: null } }, now),
    );
    given(g)
      .when(
        (m, now) =>
          consumeCode(
            m,
            {
              codeDigest: 'c2',
              tokenDigest: 's9',
              tokenPrefix: 'p9999999',
              device: device('dev'),
              ip: '10.0.0.1',
              trust: { issue: { trustId: 't2', refreshDigest: 'r9' }, policy: POLICY },
            },
            now,
          ),
        T0,
      )
      .then([
        { type: 'pairing.code_consumed', data: { codeDigest: 'c2', tokenPrefix: 'p9999999', deviceId: 'dev' } },
        { type: 'session.revoked', data: { tokenPrefix: 'p0000000', by: 'system', self: false, reason: 'replaced' } },
        { type: 'session.created', data: expect.objectContaining({ tokenPrefix: 'p9999999', deviceId: 'dev' }) },
        { type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'replaced', by: 'system' } },
        { type: 'trust.issued', data: expect.objectContaining({ trustId: 't2', deviceId: 'dev', refreshDigest: 'r9', reason: 'paired' }) },
      ]);
    expect(g.models.trust.byRefreshDigest('r0')).toBeUndefined();
  });

  it('no trust when renewal is off or the device has no id', () => {
    for (const g of [paired({ ttlMs: 0 }), paired(POLICY, '')]) {
      expect(g.log.map((e) => e.type)).toEqual(['pairing.code_registered', 'pairing.code_consumed', 'session.created']);
    }
  });

  it('renewal rotates the token, opens a session with the paired terms and replaces the live one', () => {
    const g = paired();
    const at = later(30 * 60_000);
    const out = renew(g, 'r0', 'r1', 'p1111111', at);
    expect(out.map((e) => e.type)).toEqual(['trust.rotated', 'session.revoked', 'session.created']);
    expect(out[2].data).toMatchObject({
      tokenPrefix: 'p1111111',
      // The pairing's code named no transport: the socket's own.
      transportHint: 'ws',
      expiresAt: new Date(at.getTime() + 3600_000).toISOString(),
      grants: { terminal: new Date(at.getTime() + 600_000).toISOString() },
    });
    expect(g.models.trust.byRefreshDigest('r1')!.renewals).toBe(1);
    expect(g.models.trust.byRefreshDigest('r0')).toBeUndefined();
  });

  it('a rotated-out token is reuse: the trust ends and every session of the device is revoked', () => {
    const g = paired();
    renew(g, 'r0', 'r1', 'p1111111', later(1000));
    const out = renew(g, 'r0', 'r2', 'p2222222', later(2000));
    expect(out.map((e) => e.type)).toEqual(['trust.reuse_detected', 'trust.ended', 'session.revoked']);
    expect(out[2].data).toMatchObject({ tokenPrefix: 'p1111111', reason: 'refresh_reuse' });
    expect(g.models.trust.forDevice('dev')).toBeUndefined();
    expect(renew(g, 'r1', 'r3', 'p3333333', later(3000))).toEqual([]);
  });

  it('the renewed session beside the token one rotation behind gets a fresh token (its auth.ok was lost); with the current one or none, nothing', () => {
    const g = paired();
    renew(g, 'r0', 'r1', 'p1111111', later(1000));
    const session = g.models.sessions.byTokenPrefix('p1111111')!;
    const issue = { trustId: 'tx', refreshDigest: 'rx' };
    const at = later(2000);
    expect(g.when((m, now) => reconnectTrust(m, session, { sentDigest: 'r1', issue, ip: 'i' }, POLICY, now), at)).toEqual([]);
    expect(g.when((m, now) => reconnectTrust(m, session, { sentDigest: null, issue, ip: 'i' }, POLICY, now), at)).toEqual([]);
    const out = g.when((m, now) => reconnectTrust(m, session, { sentDigest: 'r0', issue, ip: 'i' }, POLICY, now), at);
    expect(out.map((e) => [e.type, e.data])).toEqual([
      ['trust.rotated', { trustId: 't1', refreshDigest: 'rx', tokenPrefix: 'p1111111', tokenDigest: 's-p1111111', reason: 'reissued' }],
    ]);
    // The token it replaced (r1) is rotated out too now; the reissued one is current.
    expect(g.models.trust.byRefreshDigest('rx')).toMatchObject({ trustId: 't1', renewals: 1 });
    expect(g.models.trust.retiredOwner('r1')).toMatchObject({ trustId: 't1' });
  });

  it("a rotated-out token beside another device's live session is a copy: the trust ends with the owner's sessions", () => {
    const g = paired();
    renew(g, 'r0', 'r1', 'p1111111', later(1000));
    g.when(
      (m, now) => registerCode(m, { codeDigest: 'c2', source: 'register', terms: { sessionTtlSeconds: 3600, grants: {}, transportHint: null } }, now),
      later(1500),
    );
    g.when(
      (m, now) => consumeCode(m, { codeDigest: 'c2', tokenDigest: 's-thief', tokenPrefix: 'pthief00', device: device('thief'), ip: '10.0.0.9' }, now),
      later(1500),
    );
    const thief = g.models.sessions.byTokenPrefix('pthief00')!;
    const out = g.when(
      (m, now) => reconnectTrust(m, thief, { sentDigest: 'r0', issue: { trustId: 'tx', refreshDigest: 'rx' }, ip: 'i' }, POLICY, now),
      later(2000),
    );
    expect(out.map((e) => e.type)).toEqual(['trust.reuse_detected', 'trust.ended', 'session.revoked']);
    expect(out[2].data).toMatchObject({ tokenPrefix: 'p1111111', reason: 'refresh_reuse' });
  });

  it('a wrong device id and an expired trust are refused and recorded; an unknown token gives nothing', () => {
    const g = paired();
    expect(renew(g, 'r0', 'r1', 'p1111111', later(1000), 'someone-else').map((e) => e.type)).toEqual(['trust.refused']);
    expect(g.models.trust.byRefreshDigest('r0')).toBeDefined();
    expect(renew(g, 'nope', 'r1', 'p1111111', later(1000))).toEqual([]);
    const out = renew(g, 'r0', 'r1', 'p1111111', later(181 * DAY * 1000));
    expect(out.map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
      ['trust.refused', 'expired'],
      ['trust.ended', 'expired'],
    ]);
  });

  it('renewal is bound to the session token the refresh token was issued with: without it, or with another, it is refused', () => {
    const g = paired();
    expect(g.models.trust.forDevice('dev')!.tokenDigest).toBe('s0');
    for (const sent of [null, 's-other']) {
      expect(renew(g, 'r0', 'r1', 'p1111111', later(1000), 'dev', sent).map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
        ['trust.refused', 'session_mismatch'],
      ]);
    }
    expect(g.models.trust.byRefreshDigest('r0')).toBeDefined();
    renew(g, 'r0', 'r1', 'p1111111', later(1000), 'dev', 's0');
    // Each renewal binds the next one to the session it opened.
    expect(g.models.trust.byRefreshDigest('r1')!.tokenDigest).toBe('s-p1111111');
    expect(renew(g, 'r1', 'r2', 'p2222222', later(2000), 'dev', 's0').map((e) => e.type)).toEqual(['trust.refused']);
    expect(renew(g, 'r1', 'r2', 'p2222222', later(2000), 'dev', 's-p1111111').map((e) => e.type)).toContain('session.created');
  });

  it('a trust issued before binding (no digest in its events) renews by device id once, whatever session token rides beside it, then is bound', () => {
    const unbound = () => {
      const h = new Given();
      for (const e of paired().log) {
        const { tokenDigest: _, ...data } = e.data as Record<string, unknown>;
        h.event({ type: e.type, data: e.type === 'trust.issued' ? data : e.data }, new Date(e.at));
      }
      return h;
    };
    const h = unbound();
    expect(h.models.trust.forDevice('dev')!.tokenDigest).toBeNull();
    expect(renew(h, 'r0', 'r1', 'p1111111', later(1000), 'dev', null).map((e) => e.type)).toContain('session.created');
    expect(h.models.trust.byRefreshDigest('r1')!.tokenDigest).toBe('s-p1111111');
    expect(renew(unbound(), 'r0', 'r1', 'p1111111', later(1000), 'dev', 's-stale').map((e) => e.type)).toContain('session.created');
  });

  it('revoking the session ends the trust; the operator can end it alone; the sweep ends expired ones', () => {
    given(paired())
      .when((m, now) => revokeSession(m, 'p000', { kind: 'operator' }, now), T0)
      .then([
        { type: 'session.revoked', data: { tokenPrefix: 'p0000000', by: 'operator', self: false, reason: 'revoked' } },
        { type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'revoked', by: 'operator' } },
      ]);
    const h = paired();
    const endIt = (m: ReadModels, now: Date) => endTrust(m, 'p000', { kind: 'operator' }, now);
    given(h)
      .when(endIt, T0)
      .then([{ type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'operator', by: 'operator' } }]);
    expect(h.models.sessions.byTokenPrefix('p0000000')).toBeDefined();
    expect(given(h).when(endIt, T0).thenThrows('trust.not_found', 'not_found').message).toContain('no trusted-device renewal');
    const sweep = given(paired());
    sweep.when(expireTrusts, later(179 * DAY * 1000)).then([]);
    sweep
      .when(expireTrusts, later(180 * DAY * 1000))
      .then([{ type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'expired', by: 'system' } }]);
  });

  it('the operator ends the renewal of a device whose session expired, by its device id', () => {
    const g = paired();
    // The one-hour session ends; the renewal outlives it (that is what it is for).
    g.when(expireSessions, later(3600 * 1000));
    expect(g.models.sessions.byTokenPrefix('p0000000')).toBeUndefined();
    const byPrefix = (m: ReadModels, now: Date) => endTrust(m, 'p000', { kind: 'operator' }, now);
    given(g)
      .when(byPrefix, later(3601 * 1000))
      .thenThrows('sessions.not_found', 'not_found');
    const byDevice = (deviceId: string) => (m: ReadModels, now: Date) => endDeviceTrust(m, deviceId, { kind: 'operator' }, now);
    given(g)
      .when(byDevice('other'), later(3601 * 1000))
      .thenThrows('trust.not_found', 'not_found');
    given(g)
      .when(byDevice(''), later(3601 * 1000))
      .thenThrows('trust.not_found', 'not_found');
    given(g)
      .when(byDevice('dev'), later(3601 * 1000))
      .then([{ type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'operator', by: 'operator' } }]);
    expect(g.models.trust.forDevice('dev')).toBeUndefined();
    given(g)
      .when(byDevice('dev'), later(3602 * 1000))
      .thenThrows('trust.not_found');
  });

  it('a renewal past its lifetime, not yet swept, is not ended by hand (the sweep writes its end)', () => {
    given(paired())
      .when((m, now) => endDeviceTrust(m, 'dev', { kind: 'operator' }, now), later(180 * DAY * 1000))
      .thenThrows('trust.not_found', 'not_found');
  });

  it('an abandoned renewal makes the previous token current again and drops the new session', () => {
    const g = paired();
    renew(g, 'r0', 'r1', 'p1111111', later(1000));
    const abandon = (m: ReadModels) =>
      abandonRenewal(m, { trustId: 't1', previousDigest: 'r0', previousPrefix: 'p0000000', previousTokenDigest: 's0', newPrefix: 'p1111111' });
    const rotatedBack = {
      type: 'trust.rotated',
      data: { trustId: 't1', refreshDigest: 'r0', tokenPrefix: 'p0000000', tokenDigest: 's0', reason: 'abandoned' },
    } as const;
    given(g)
      .when(abandon)
      .then([rotatedBack, { type: 'session.revoked', data: { tokenPrefix: 'p1111111', by: 'system', self: false, reason: 'abandoned' } }]);
    // Told again, the new session is already gone: nothing more to drop.
    given(g).when(abandon).then([rotatedBack]);
    expect(g.models.trust.byRefreshDigest('r0')!.renewals).toBe(0);
    expect(g.models.trust.retiredOwner('r0')).toBeUndefined();
    // The token that never left the relay is retired: presented, it would be a copy.
    expect(g.models.trust.retiredOwner('r1')).toBeDefined();
    // The phone renews with what it still holds: the previous refresh token and the previous session token.
    expect(g.models.trust.byRefreshDigest('r0')!.tokenDigest).toBe('s0');
    expect(renew(g, 'r0', 'r2', 'p2222222', later(2000), 'dev', 's0').map((e) => e.type)).toContain('session.created');
  });

  it('remembers a bounded number of rotated-out tokens per trust, and replay gives the same model', () => {
    const g = paired();
    for (let i = 1; i <= RETIRED_PER_TRUST + 5; i++) renew(g, `r${i - 1}`, `r${i}`, `p${String(i).padStart(7, '0')}`, later(i * 1000));
    expect(g.models.trust.retiredOwner('r0')).toBeUndefined();
    expect(g.models.trust.retiredOwner(`r${RETIRED_PER_TRUST + 4}`)).toBeDefined();
    const again = new ReadModels();
    for (const e of g.log) again.apply(e);
    expect(again.trust.snapshot()).toEqual(g.models.trust.snapshot());
    // The same event twice is harmless.
    again.apply(g.log.at(-1)!);
    expect(again.trust.snapshot()).toEqual(g.models.trust.snapshot());
  });
  it('a renewal while renewal is off (RELAY_REFRESH_TTL_DAYS=0) is refused and recorded; the trust is kept', () => {
    const g = paired();
    given(g)
      .when(renewing('r0', 'r1', 'p1111111', 'dev', undefined, { ttlMs: 0 }), later(1000))
      .then([{ type: 'trust.refused', data: { trustId: 't1', reason: 'disabled', ip: '10.0.0.2' } }]);
    expect(g.models.trust.byRefreshDigest('r0')).toBeDefined();
    expect(g.models.sessions.byTokenPrefix('p1111111')).toBeUndefined();
  });

  it('a trust renews until the instant it expires, not at it', () => {
    const expiry = 180 * DAY * 1000;
    given(paired())
      .when(renewing('r0', 'r1', 'p1111111'), later(expiry - 1))
      .then([
        {
          type: 'trust.rotated',
          data: { trustId: 't1', refreshDigest: 'r1', tokenPrefix: 'p1111111', tokenDigest: 's-p1111111', reason: 'renewed' },
        },
        {
          type: 'session.created',
          data: expect.objectContaining({ tokenPrefix: 'p1111111', expiresAt: later(expiry - 1 + 3600_000).toISOString() }),
        },
      ]);
    given(paired())
      .when(renewing('r0', 'r1', 'p1111111'), later(expiry))
      .then([
        { type: 'trust.refused', data: { trustId: 't1', reason: 'expired', ip: '10.0.0.2' } },
        { type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'expired', by: 'system' } },
      ]);
  });

  it('a renewal whose new token prefix another session holds is refused (409), leaving that session as it was', () => {
    const g = paired();
    g.apply([sessionCreated({ tokenPrefix: 'p2222222', deviceId: 'other' })], later(500));
    given(g)
      .when(renewing('r0', 'r1', 'p2222222'), later(1000))
      .thenThrows('auth.token_collision', 'conflict');
    expect(g.models.sessions.byTokenPrefix('p2222222')).toMatchObject({ deviceId: 'other', tokenDigest: 'd-p2222222' });
    expect(g.models.trust.byRefreshDigest('r0')).toBeDefined();
  });

  it("a copied refresh token ends its own device's sessions and no other device's", () => {
    const g = paired();
    renew(g, 'r0', 'r1', 'p1111111', later(1000));
    g.apply([sessionCreated({ tokenPrefix: 'pother00', deviceId: 'other' })], later(1500));
    given(g)
      .when(renewing('r0', 'r2', 'p2222222'), later(2000))
      .then([
        { type: 'trust.reuse_detected', data: { trustId: 't1', deviceId: 'dev', ip: '10.0.0.2' } },
        { type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'reuse', by: 'system' } },
        { type: 'session.revoked', data: { tokenPrefix: 'p1111111', by: 'system', self: false, reason: 'refresh_reuse' } },
      ]);
    expect(g.models.sessions.byTokenPrefix('pother00')).toBeDefined();
  });

  it('a device paired before renewal existed adopts a trust on reconnect, with the terms its session was given; not without a device id, nor twice', () => {
    const g = new Given();
    const terms = { sessionTtlSeconds: 3600, grants: { chat: null, terminal: 600 }, transportHint: null };
    for (const [code, prefix, deviceId] of [
      ['c1', 'p0000000', 'dev'],
      ['c2', 'panon000', ''],
    ]) {
      g.when((m, now) => registerCode(m, { codeDigest: code, source: 'register', terms }, now), T0);
      g.when(
        (m, now) =>
          consumeCode(m, { codeDigest: code, tokenDigest: `s-${prefix}`, tokenPrefix: prefix, device: device(deviceId), ip: '10.0.0.1' }, now),
        T0,
      );
    }
    const reconnect = (prefix: string) => (m: ReadModels, now: Date) =>
      reconnectTrust(m, m.sessions.byTokenPrefix(prefix)!, { sentDigest: null, issue: { trustId: 't1', refreshDigest: 'r0' }, ip: 'i' }, POLICY, now);
    given(g)
      .when(reconnect('p0000000'), later(1000))
      .then([
        {
          type: 'trust.issued',
          data: {
            trustId: 't1',
            deviceId: 'dev',
            tokenPrefix: 'p0000000',
            tokenDigest: 's-p0000000',
            refreshDigest: 'r0',
            expiresAt: later(1000 + POLICY.ttlMs).toISOString(),
            // Read back from the session: "as long as the session" became its hour.
            terms: { sessionTtlSeconds: 3600, grants: { chat: 3600, terminal: 600 }, transportHint: null },
            reason: 'adopted',
          },
        },
      ]);
    given(g).when(reconnect('p0000000'), later(2000)).then([]);
    given(g).when(reconnect('panon000'), later(2000)).then([]);
  });

  it('a rotated-out token beside a session of the same device that its trust did not open is a copy too', () => {
    const g = paired();
    renew(g, 'r0', 'r1', 'p1111111', later(1000));
    // The device paired again through a client that keeps no refresh token: a new session, the trust left as it was.
    g.when(
      (m, now) => registerCode(m, { codeDigest: 'c2', source: 'register', terms: { sessionTtlSeconds: 3600, grants: {}, transportHint: null } }, now),
      later(1500),
    );
    g.when(
      (m, now) => consumeCode(m, { codeDigest: 'c2', tokenDigest: 's9', tokenPrefix: 'p9999999', device: device('dev'), ip: '10.0.0.1' }, now),
      later(1500),
    );
    given(g)
      .when(
        (m, now) =>
          reconnectTrust(
            m,
            m.sessions.byTokenPrefix('p9999999')!,
            { sentDigest: 'r0', issue: { trustId: 'tx', refreshDigest: 'rx' }, ip: 'i' },
            POLICY,
            now,
          ),
        later(2000),
      )
      .then([
        { type: 'trust.reuse_detected', data: { trustId: 't1', deviceId: 'dev', ip: 'i' } },
        { type: 'trust.ended', data: { trustId: 't1', deviceId: 'dev', reason: 'reuse', by: 'system' } },
        { type: 'session.revoked', data: { tokenPrefix: 'p9999999', by: 'system', self: false, reason: 'refresh_reuse' } },
      ]);
  });
});
