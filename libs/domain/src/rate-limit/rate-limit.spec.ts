import { rateLimitBlocked } from '../../../../test/support/events';
import { at, Given, given, T0 } from '../../../../test/support/given';
import { assertNotBlocked, clearAllBlocks, recordAuthFailure, UNBLOCK_REASON, unblockAddress } from './rate-limit';
import { RateLimitProjection, rateLimitSubject } from './rate-limit.projection';

describe('rate limiter', () => {
  const fail = (g: Given, ip: string, kind: 'code' | 'token', now: Date) =>
    g.when((m, t) => recordAuthFailure(m.rateLimit, { ip, kind, via: 'ws', reason: 'x' }, t), now);

  // Wire pins: WIRE.md "Pairing and sessions": "Rate limiter per IP: 10 bad codes in 60 s block 120 s; 5 bad
  // tokens in 60 s block 300 s."
  it.each([
    ['code', 10, 120],
    ['token', 5, 300],
  ] as const)('%s: the %ith failure within 60 s sets a %i s block, not one before', (kind, n, blockSeconds) => {
    const g = new Given();
    for (let i = 0; i < n - 1; i++) expect(fail(g, '1.1.1.1', kind, at(T0, i)).map((e) => e.type)).toEqual(['auth.failed']);
    expect(g.models.rateLimit.blockedUntil('1.1.1.1', at(T0, n))).toBeNull();
    const out = fail(g, '1.1.1.1', kind, at(T0, 30));
    expect(out.map((e) => e.type)).toEqual(['auth.failed', 'ratelimit.blocked']);
    expect(out[1].data).toEqual({ ip: '1.1.1.1', kind, until: at(T0, 30 + blockSeconds).toISOString() });
    expect(() => assertNotBlocked(g.models.rateLimit, '1.1.1.1', at(T0, 30 + blockSeconds - 1))).toThrow(
      expect.objectContaining({ code: 'auth.rate_limited', kind: 'rate_limited', extra: { retry_after: 1 } }),
    );
    expect(() => assertNotBlocked(g.models.rateLimit, '1.1.1.1', at(T0, 30 + blockSeconds))).not.toThrow();
    expect(() => assertNotBlocked(g.models.rateLimit, '1.1.1.2', at(T0, 31))).not.toThrow();
  });

  it.each([
    ['code', 10],
    ['token', 5],
  ] as const)('%s: a failure 60 s old has left the window', (kind, n) => {
    const g = new Given();
    fail(g, 'ip', kind, T0);
    for (let i = 0; i < n - 2; i++) fail(g, 'ip', kind, at(T0, 10));
    // At 60 s the first failure has left: this one is the (n-1)th in the window.
    expect(fail(g, 'ip', kind, at(T0, 60)).map((e) => e.type)).toEqual(['auth.failed']);
    expect(fail(g, 'ip', kind, at(T0, 61)).map((e) => e.type)).toEqual(['auth.failed', 'ratelimit.blocked']);
  });

  it('failures that slid out of the window do not count', () => {
    const g = new Given();
    for (const t of [10, 20, 30, 40]) fail(g, 'ip', 'token', at(T0, t));
    // At 70 s the failure at 10 s has left the 60 s window: 20, 30, 40 and this one make 4.
    expect(fail(g, 'ip', 'token', at(T0, 70)).map((e) => e.type)).toEqual(['auth.failed']);
    expect(fail(g, 'ip', 'token', at(T0, 71)).map((e) => e.type)).toEqual(['auth.failed', 'ratelimit.blocked']);
  });

  it('failures while blocked do not extend or re-set the block', () => {
    const g = new Given();
    for (let i = 0; i < 5; i++) fail(g, 'ip', 'token', at(T0, 0));
    for (let i = 0; i < 10; i++) expect(fail(g, 'ip', 'token', at(T0, 10)).map((e) => e.type)).toEqual(['auth.failed']);
    expect(g.models.rateLimit.blockedUntil('ip', at(T0, 10))).toBe(at(T0, 300).getTime());
  });

  it('counts kinds and addresses apart', () => {
    const g = new Given();
    for (let i = 0; i < 4; i++) fail(g, 'ip', 'token', T0);
    for (let i = 0; i < 9; i++) fail(g, 'ip', 'code', T0);
    for (let i = 0; i < 4; i++) fail(g, 'other', 'token', T0);
    expect(g.models.rateLimit.activeBlocks(T0)).toEqual([]);
  });

  it('clearAllBlocks clears every block and the counts, and writes nothing when there is nothing to clear', () => {
    const g = new Given();
    expect(g.when((m, now) => clearAllBlocks(m.rateLimit, now, 'test'), T0)).toEqual([]);
    for (let i = 0; i < 5; i++) fail(g, 'a', 'token', T0);
    for (let i = 0; i < 10; i++) fail(g, 'b', 'code', T0);
    fail(g, 'c', 'token', T0);
    expect(
      g.models.rateLimit
        .activeBlocks(T0)
        .map((b) => b.ip)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(g.when((m, now) => clearAllBlocks(m.rateLimit, now, 'test'), T0).map((e) => e.data)).toEqual([{ ip: null, reason: 'test' }]);
    expect(g.models.rateLimit.activeBlocks(T0)).toEqual([]);
    expect(g.models.rateLimit.failuresWithin('c', 'token', T0, 60)).toBe(0);
    // Expired blocks are not "blocks": nothing to clear.
    for (let i = 0; i < 5; i++) fail(g, 'a', 'token', T0);
    expect(g.when((m, now) => clearAllBlocks(m.rateLimit, now, 'test'), at(T0, 300))).toEqual([]);
  });

  describe("the operator's unblock", () => {
    it('lifts a block in force, with its failure counts, so the address may try again at once', () => {
      const g = new Given();
      for (let i = 0; i < 10; i++) fail(g, '198.51.100.7', 'code', T0);
      expect(g.models.rateLimit.activeBlocks(at(T0, 5))).toEqual([
        { ip: '198.51.100.7', kind: 'code', since: T0.getTime(), until: at(T0, 120).getTime() },
      ]);
      given(g)
        .when((m, now) => unblockAddress(m.rateLimit, '198.51.100.7', now), at(T0, 5))
        .then([{ type: 'ratelimit.cleared', data: { ip: '198.51.100.7', reason: UNBLOCK_REASON } }]);
      expect(() => assertNotBlocked(g.models.rateLimit, '198.51.100.7', at(T0, 5))).not.toThrow();
      expect(g.models.rateLimit.failuresWithin('198.51.100.7', 'code', at(T0, 5), 60)).toBe(0);
      // A fresh window: nine more failures do not block again.
      for (let i = 0; i < 9; i++) expect(fail(g, '198.51.100.7', 'code', at(T0, 6)).map((e) => e.type)).toEqual(['auth.failed']);
    });

    it('leaves other blocks alone', () => {
      const g = given([rateLimitBlocked({ ip: '198.51.100.7' }), rateLimitBlocked({ ip: '203.0.113.9', kind: 'token' })]).state;
      given(g)
        .when((m, now) => unblockAddress(m.rateLimit, '203.0.113.9', now))
        .then([{ type: 'ratelimit.cleared', data: { ip: '203.0.113.9', reason: UNBLOCK_REASON } }]);
      expect(g.models.rateLimit.activeBlocks(T0).map((b) => b.ip)).toEqual(['198.51.100.7']);
    });

    it('names an IPv6 block by its /64, whichever address of it the operator gives', () => {
      const g = given([rateLimitBlocked({ ip: '2001:db8:1:2::a' })]).state;
      given(g)
        .when((m, now) => unblockAddress(m.rateLimit, '2001:db8:1:2:ffff::9', now))
        .then([{ type: 'ratelimit.cleared', data: { ip: '2001:db8:1:2::/64', reason: UNBLOCK_REASON } }]);
      given([rateLimitBlocked({ ip: '2001:db8:1:2::a' })])
        .when((m, now) => unblockAddress(m.rateLimit, '2001:db8:1:2::/64', now))
        .then([{ type: 'ratelimit.cleared', data: { ip: '2001:db8:1:2::/64', reason: UNBLOCK_REASON } }]);
    });

    it('refuses an address with no block in force (never blocked, another address, or the block already ended)', () => {
      given([])
        .when((m, now) => unblockAddress(m.rateLimit, '198.51.100.7', now))
        .thenThrows('ratelimit.not_blocked', 'not_found');
      given([rateLimitBlocked()])
        .when((m, now) => unblockAddress(m.rateLimit, '198.51.100.8', now))
        .thenThrows('ratelimit.not_blocked', 'not_found');
      given([rateLimitBlocked()])
        .when((m, now) => unblockAddress(m.rateLimit, '198.51.100.7', now), at(T0, 120))
        .thenThrows('ratelimit.not_blocked', 'not_found');
    });

    it('the same unblock twice: the second is refused and writes nothing', () => {
      const g = given([rateLimitBlocked()]).state;
      given(g)
        .when((m, now) => unblockAddress(m.rateLimit, '198.51.100.7', now))
        .then([{ type: 'ratelimit.cleared', data: expect.anything() }]);
      given(g)
        .when((m, now) => unblockAddress(m.rateLimit, '198.51.100.7', now))
        .thenThrows('ratelimit.not_blocked');
    });
  });

  describe('IPv6: one limit per /64', () => {
    it.each([
      ['2001:db8:1:2::a', '2001:db8:1:2::/64'],
      ['2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
      ['2001:DB8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
      ['203.0.113.9', '203.0.113.9'],
      ['unknown', 'unknown'],
      ['1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7:8:9'],
      ['1::2::3', '1::2::3'],
      ['zz::1', 'zz::1'],
      // Peers a forwarder vouches for keep the qualifier; the address part groups as above.
      ['127.0.0.1 via secure-link', '127.0.0.1 via secure-link'],
      ['2001:db8:1:2::a via ingress', '2001:db8:1:2::/64 via ingress'],
      ['route:AbC_-1 via reach', 'route:AbC_-1 via reach'],
    ])('%s -> %s', (ip, subject) => {
      expect(rateLimitSubject(ip)).toBe(subject);
    });

    it('addresses of one /64 share a limit and a block; another /64 and IPv4 do not', () => {
      const g = new Given();
      for (let i = 1; i <= 4; i++) fail(g, `2001:db8:1:2::${i}`, 'token', T0);
      const out = fail(g, '2001:db8:1:2:ffff::5', 'token', at(T0, 1));
      expect(out.map((e) => e.type)).toEqual(['auth.failed', 'ratelimit.blocked']);
      expect(out[1].data).toMatchObject({ ip: '2001:db8:1:2:ffff::5' }); // the event keeps the real address
      expect(() => assertNotBlocked(g.models.rateLimit, '2001:db8:1:2:1234::1', at(T0, 2))).toThrow(
        expect.objectContaining({ code: 'auth.rate_limited' }),
      );
      expect(() => assertNotBlocked(g.models.rateLimit, '2001:db8:1:3::1', at(T0, 2))).not.toThrow();
      expect(() => assertNotBlocked(g.models.rateLimit, '198.51.100.1', at(T0, 2))).not.toThrow();
      expect(g.models.rateLimit.activeBlocks(at(T0, 2))).toEqual([
        { ip: '2001:db8:1:2::/64', kind: 'token', until: at(T0, 301).getTime(), since: at(T0, 1).getTime() },
      ]);
    });
  });

  describe('memory stays bounded', () => {
    it('keeps at most the newest 64 failures of one subject (a flood cannot make replay quadratic)', () => {
      const g = new Given();
      for (let i = 0; i < 500; i++) g.event({ type: 'auth.failed', data: { ip: '192.0.2.9', kind: 'code', via: 'ws', reason: 'x' } }, at(T0, 1));
      expect(g.models.rateLimit.failuresWithin('192.0.2.9', 'code', at(T0, 2), 60)).toBe(64);
    });

    it('forgets addresses with no recent failure and blocks that ended, on the next failure a minute later', () => {
      const g = new Given();
      for (let i = 0; i < 200; i++) fail(g, `10.0.${i >> 8}.${i & 255}`, 'code', at(T0, i % 50));
      for (let i = 0; i < 5; i++) fail(g, '192.0.2.7', 'token', at(T0, 10));
      expect(g.models.rateLimit.size).toEqual({ failures: 200, blocks: 1 });
      // Eleven minutes on, one new failure sweeps everything stale: the 200 lists and the ended block.
      fail(g, '192.0.2.8', 'code', at(T0, 11 * 60));
      expect(g.models.rateLimit.size).toEqual({ failures: 1, blocks: 0 });
    });

    it('a replay from a snapshot sweeps at the same events as the live run', () => {
      const live = new Given();
      for (let i = 0; i < 30; i++) fail(live, `10.1.0.${i}`, 'code', at(T0, i * 20)); // 0..580 s
      const snap = JSON.parse(JSON.stringify(live.models.rateLimit.snapshot())) as ReturnType<RateLimitProjection['snapshot']>;
      const restored = new RateLimitProjection();
      restored.restore(snap);
      // 600..1180 s: entries from the first half age out at the sweeps both sides run.
      for (let i = 30; i < 60; i++) for (const e of fail(live, `10.1.0.${i}`, 'code', at(T0, i * 20))) restored.apply(e);
      expect(restored.snapshot()).toEqual(live.models.rateLimit.snapshot());
      expect(live.models.rateLimit.size.failures).toBeLessThan(60);
    });
  });
});
