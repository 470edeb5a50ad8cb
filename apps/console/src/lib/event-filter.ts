import type { ConsoleEvent } from '@svc/console-api';

/** The log's filters; the same rules as the relay's `/console/api/events` (so live and paged agree). */
export type EventFilters = { type: string; device: string; since: number | null; until: number | null };

export const NO_FILTERS: EventFilters = { type: '', device: '', since: null, until: null };

export function typeList(raw: string): string[] {
  return raw
    .split(',')
    .map((t) => t.trim().replace(/\*$/, ''))
    .filter(Boolean);
}

export function matchesFilters(e: ConsoleEvent, f: EventFilters): boolean {
  const types = typeList(f.type);
  if (types.length && !types.some((t) => (t.endsWith('.') ? e.type.startsWith(t) : e.type === t || e.type.startsWith(`${t}.`)))) return false;
  const at = Date.parse(e.at);
  if (f.since !== null && at < f.since) return false;
  if (f.until !== null && at > f.until) return false;
  const d = f.device.trim();
  if (d) {
    const prefix = typeof e.data.tokenPrefix === 'string' ? e.data.tokenPrefix : null;
    const actorPrefix = e.actor.startsWith('device:') ? e.actor.slice(7) : null;
    if (!((prefix && prefix.startsWith(d)) || (actorPrefix && actorPrefix.startsWith(d)) || e.data.deviceId === d)) return false;
  }
  return true;
}

export function filterQuery(f: EventFilters): string {
  const q = new URLSearchParams();
  if (f.type.trim()) q.set('type', f.type.trim());
  if (f.device.trim()) q.set('device', f.device.trim());
  if (f.since !== null) q.set('since', new Date(f.since).toISOString());
  if (f.until !== null) q.set('until', new Date(f.until).toISOString());
  return q.toString();
}

export function hasFilters(f: EventFilters): boolean {
  return Boolean(f.type.trim() || f.device.trim() || f.since !== null || f.until !== null);
}
