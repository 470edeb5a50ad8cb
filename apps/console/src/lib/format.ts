const UNITS: Array<[number, string]> = [
  [365 * 86400, 'y'],
  [86400, 'd'],
  [3600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/** 90061 → "1d 1h"; keeps the two largest units. */
export function duration(seconds: number): string {
  let s = Math.max(0, Math.round(seconds));
  if (s < 1) return '0s';
  const parts: string[] = [];
  for (const [size, unit] of UNITS) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)}${unit === 'min' ? ' min' : unit}`);
      s %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** "3 min ago" / "in 2h 5 min" relative to `nowMs`. */
export function relative(epochMs: number, nowMs: number): string {
  const diff = (epochMs - nowMs) / 1000;
  if (Math.abs(diff) < 5) return 'just now';
  return diff < 0 ? `${duration(-diff)} ago` : `in ${duration(diff)}`;
}

/** mm:ss (or h:mm:ss) for countdowns. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export function exact(epochMs: number): string {
  const d = new Date(epochMs);
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

const CLOCK = {
  minutes: new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }),
  seconds: new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', second: '2-digit' }),
};

/**
 * A time of day in the reader's own locale and zone ("14:05:02" in de-DE, "2:05:02 PM" in en-US): the
 * browser's locale decides the 12 or 24 hour clock. For the charts, whose times are the reader's.
 */
export function localClock(epochMs: number, withSeconds = true): string {
  return (withSeconds ? CLOCK.seconds : CLOCK.minutes).format(epochMs);
}

export function timeOfDay(iso: string): string {
  return new Date(iso).toISOString().slice(11, 19);
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function count(n: number): string {
  return new Intl.NumberFormat('en').format(n);
}

/** `1 segment`, `3 segments` (the relay's one rule, shared with the CLI). */
export { plural } from '@svc/events/plural';
