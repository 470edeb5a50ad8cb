import { BrokerAdmission, sourceOf, type AdmissionLimits, type Ticket } from './broker-admission';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const LIMITS: AdmissionLimits = { refusalsPerMinute: 3, refusalsPerMinuteTotal: 10, trackedSources: 8, trustedMs: 3_600_000 };

function ticket(a: BrokerAdmission, from: string, now: number): Ticket {
  const r = a.admit(from, now);
  if (!r.ok) throw new Error(`${from} not admitted: ${r.why}`);
  return r.ticket;
}
const refuse = (a: BrokerAdmission, from: string, now: number) => a.settle(ticket(a, from, now), 'refused', now);
const match = (a: BrokerAdmission, from: string, now: number) => a.settle(ticket(a, from, now), 'matched', now);

describe('BrokerAdmission (issue 41, items 3 and 4)', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2::a', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::a', '2001:db8:1:3::/64'],
    [undefined, 'unknown'],
  ])('the source of %s is %s (one IPv6 subscriber line gets a whole /64)', (address, source) => {
    expect(sourceOf(address)).toBe(source);
  });

  it('matched registrations never count: one address opens as many as it likes', () => {
    const a = new BrokerAdmission(LIMITS);
    for (let i = 0; i < 500; i++) match(a, '198.51.100.1', T0 + i);
    expect(a.admit('198.51.100.1', T0 + 500).ok).toBe(true);
  });

  it('refusals from addresses of one /64 share its budget; another /64 and IPv4 keep theirs; a minute later it is heard again', () => {
    const a = new BrokerAdmission(LIMITS);
    refuse(a, '2001:db8:1:2::1', T0);
    refuse(a, '2001:db8:1:2::2', T0 + 1000);
    refuse(a, '2001:db8:1:2:abcd::3', T0 + 2000);
    expect(a.admit('2001:db8:1:2::4', T0 + 3000)).toEqual({ ok: false, why: 'source', retryAfterS: 57 });
    expect(a.admit('2001:db8:1:3::1', T0 + 3000).ok).toBe(true);
    expect(a.admit('203.0.113.1', T0 + 3000).ok).toBe(true);
    // The oldest refusal leaves the window first.
    expect(a.admit('2001:db8:1:2::4', T0 + 60_000).ok).toBe(true);
  });

  it('connections still in flight count against their source until they settle', () => {
    const a = new BrokerAdmission(LIMITS);
    const open = [ticket(a, '198.51.100.2', T0), ticket(a, '198.51.100.2', T0), ticket(a, '198.51.100.2', T0)];
    expect(a.admit('198.51.100.2', T0)).toMatchObject({ ok: false, why: 'source' });
    expect(a.sizes().inFlight).toBe(3);
    for (const t of open) a.settle(t, 'matched', T0);
    a.settle(open[0], 'refused', T0); // settled once: a second call is nothing
    expect(a.sizes().inFlight).toBe(0);
    expect(a.admit('198.51.100.2', T0).ok).toBe(true);
  });

  it('rotating addresses: past the total a minute, new sources wait; a source that matched within trustedMs still gets in', () => {
    const a = new BrokerAdmission({ ...LIMITS, trackedSources: 100 });
    match(a, '198.51.100.7', T0);
    for (let i = 1; i <= 10; i++) refuse(a, `192.0.2.${i}`, T0 + i);
    expect(a.admit('192.0.2.11', T0 + 20)).toMatchObject({ ok: false, why: 'total' });
    expect(a.admit('198.51.100.7', T0 + 20).ok).toBe(true);
    // An hour on, the trust is gone, and so is the minute: everyone is heard again.
    expect(a.admit('192.0.2.11', T0 + 61_000).ok).toBe(true);
    expect(a.sizes().trustedSources).toBe(1);
    a.admit('192.0.2.12', T0 + 3_600_001);
    expect(a.sizes().trustedSources).toBe(0);
  });

  it('10,000 refusals from 10,000 addresses: it tracks at most trackedSources, and forgets them all a minute later', () => {
    const a = new BrokerAdmission({ ...LIMITS, refusalsPerMinuteTotal: 1_000_000 });
    for (let i = 0; i < 10_000; i++) refuse(a, `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, T0 + i);
    expect(a.sizes()).toEqual({ refusingSources: 8, trustedSources: 0, inFlight: 0 });
    a.admit('192.0.2.1', T0 + 10_000 + 60_000);
    expect(a.sizes().refusingSources).toBe(1);
  });
});
