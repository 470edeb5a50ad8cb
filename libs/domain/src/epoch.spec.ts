import { epoch, isoMs, secondsBetween } from './epoch';

describe('epoch', () => {
  it('turns milliseconds, Dates and ISO strings into whole seconds, and keeps null', () => {
    expect(epoch(1_772_366_400_999)).toBe(1_772_366_400);
    expect(epoch(new Date('2026-03-01T12:00:00.500Z'))).toBe(1_772_366_400);
    expect(epoch('2026-03-01T12:00:00.000Z')).toBe(1_772_366_400);
    expect(epoch(null)).toBeNull();
  });
});

describe('secondsBetween', () => {
  it('counts whole seconds of a span, floored, from ms or Dates, never below 0', () => {
    expect(secondsBetween(1_000, 2_999)).toBe(1);
    expect(secondsBetween(new Date(0), new Date(59_999))).toBe(59);
    expect(secondsBetween(1_500, new Date(4_400))).toBe(2);
    expect(secondsBetween(5_000, 1_000)).toBe(0);
    // A span, not two timestamps: 0.6 s to 1.4 s is 0 whole seconds, though epoch() of each end differs by 1.
    expect(secondsBetween(600, 1_400)).toBe(0);
  });
});

describe('isoMs (Date.parse for the relay own ISO shape)', () => {
  it('agrees with Date.parse on 200,000 toISOString() values from 1970 to 2400, leap days and month ends included', () => {
    const start = Date.UTC(1970, 0, 1);
    const span = Date.UTC(2400, 0, 1) - start;
    // One expect for all (200,000 expect calls took 15 s); the first misses, if any, are what it prints.
    const misses: Array<[string, number, number]> = [];
    for (let i = 0; i < 200_000; i++) {
      const t = start + Math.floor((span * i) / 200_000) + (i % 1000);
      const s = new Date(t).toISOString();
      const got = isoMs(s);
      if (got !== t && misses.length < 10) misses.push([s, got, t]);
    }
    expect(misses).toEqual([]);
    for (const s of [
      '2024-02-29T23:59:59.999Z',
      '2000-02-29T00:00:00.000Z',
      '2100-03-01T00:00:00.000Z',
      '1970-01-01T00:00:00.000Z',
      '2026-12-31T12:00:00.000Z',
    ])
      expect(isoMs(s)).toBe(Date.parse(s));
  });

  it('leaves every other shape, and out-of-range fields, to Date.parse (same answer, NaN included)', () => {
    for (const s of [
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.000+01:00',
      '2026-01-01',
      '2026-13-01T00:00:00.000Z',
      '2026-02-30T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T00:60:00.000Z',
      '2026-0a-01T00:00:00.000Z',
      '2026/01/01T00:00:00.000Z',
      'not a date at all, 24ch',
      '',
    ])
      expect(Object.is(isoMs(s), Date.parse(s))).toBe(true);
  });
});
