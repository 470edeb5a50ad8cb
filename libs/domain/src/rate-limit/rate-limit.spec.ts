import { at, Given } from '../../../../test/support/given';
import { assertNotBlocked, clearAllBlocks, recordAuthFailure } from './rate-limit';
import { DEFAULT_RATE_LIMIT } from './rate-limit.projection';

const T0 = new Date('2026-03-01T00:00:00.000Z');

describe('rate limiter', () => {
  const fail = (g: Given, ip: string, kind: 'code' | 'token', now: Date) =>
    g.when((m, t) => recordAuthFailure(m.rateLimit, { ip, kind, via: 'ws', reason: 'x' }, t), now);

  it('has the WIRE.md thresholds', () => {
    expect(DEFAULT_RATE_LIMIT).toEqual({
      code: { failures: 10, windowSeconds: 60, blockSeconds: 120 },
      token: { failures: 5, windowSeconds: 60, blockSeconds: 300 },
    });
  });

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
});
