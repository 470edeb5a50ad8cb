import { DAY, formatDuration, MAX_FINITE_SECONDS, parseDuration } from './durations';
import { DomainError } from './errors';

describe('durations', () => {
  it.each<[string | number, number | null]>([
    ['90s', 90],
    ['30m', 1800],
    ['12h', 43_200],
    ['7d', 7 * DAY],
    ['2w', 14 * DAY],
    ['1y', 365 * DAY],
    ['10y', MAX_FINITE_SECONDS],
    ['3600', 3600],
    [' 7D ', 7 * DAY],
    ['never', null],
    ['NEVER', null],
    ['0', null],
    [0, null],
    [60, 60],
  ])('parseDuration(%p) = %p', (input, seconds) => {
    expect(parseDuration(input)).toBe(seconds);
  });

  it.each(['', '7 d', '-1', '1.5h', '7days', 'forever', '1e3', 'd', '99999999999'])(
    'refuses %p with validation.duration naming the field',
    (input) => {
      expect(() => parseDuration(input, 'grants.terminal')).toThrow(DomainError);
      expect(() => parseDuration(input, 'grants.terminal')).toThrow(/^grants\.terminal: /);
    },
  );

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_FINITE_SECONDS + 1])('refuses the number %p', (n) => {
    expect(() => parseDuration(n, 'ttl_seconds')).toThrow(expect.objectContaining({ code: 'validation.duration', kind: 'invalid' }));
  });

  it('caps finite durations at ten years (use never beyond that)', () => {
    expect(() => parseDuration('11y')).toThrow(/ten years/);
  });

  it.each<[number | null, string]>([
    [null, 'never'],
    [90, '90s'],
    [120, '2m'],
    [3600, '1h'],
    [7 * DAY, '7d'],
    [365 * DAY, '1y'],
    [DAY + 1, `${DAY + 1}s`],
  ])('formatDuration(%p) = %p, and it parses back', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
    expect(parseDuration(text)).toBe(seconds);
  });
});
