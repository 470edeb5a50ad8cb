import { DomainError } from './errors';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };

export const DAY = 86_400;
/** The longest finite lifetime a session or grant may be given (ten years); longer is `never`. */
export const MAX_FINITE_SECONDS = 10 * 365 * DAY;

/**
 * `90s`, `30m`, `12h`, `7d`, `2w`, `1y`, a bare number of seconds, or `never` / `0`.
 * Returns seconds, or null for never.
 */
export function parseDuration(input: string | number, field = 'duration'): number | null {
  if (typeof input === 'number') return checkSeconds(input, field);
  const text = input.trim().toLowerCase();
  if (text === 'never' || text === '0') return null;
  const m = /^(\d{1,10})([smhdwy]?)$/.exec(text);
  if (!m) throw new DomainError('validation.duration', 'invalid', `${field}: "${input}" is not a duration (use 90s, 30m, 12h, 7d, 1y or never)`);
  return checkSeconds(Number(m[1]) * UNIT_SECONDS[m[2] || 's'], field);
}

function checkSeconds(seconds: number, field: string): number | null {
  if (!Number.isInteger(seconds) || seconds < 0) {
    throw new DomainError('validation.duration', 'invalid', `${field}: must be a whole number of seconds >= 0`);
  }
  if (seconds === 0) return null;
  if (seconds > MAX_FINITE_SECONDS) {
    throw new DomainError('validation.duration', 'invalid', `${field}: at most ${MAX_FINITE_SECONDS} seconds (ten years); use 0 for never`);
  }
  return seconds;
}

/** The wire form of a duration: `ttl_seconds` where 0 means never. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return 'never';
  for (const [unit, size] of [
    ['y', 31_536_000],
    ['d', DAY],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}
