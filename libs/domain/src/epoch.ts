/**
 * Wire times are whole epoch seconds (WIRE.md); events hold ISO strings and the read models milliseconds.
 * `null` (never expires) stays `null`.
 */
export function epoch(t: number | Date | string): number;
export function epoch(t: number | Date | string | null): number | null;
export function epoch(t: number | Date | string | null): number | null {
  if (t === null) return null;
  const ms = typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : t.getTime();
  return Math.floor(ms / 1000);
}
