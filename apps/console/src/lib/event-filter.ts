import type { ConsoleEvent } from '@svc/console-api';
import { eventLogFilter, matchesEventLog } from '@svc/events/event-log-filter';

/** The log's filters as the form holds them. */
export type EventFilters = { type: string; device: string; since: number | null; until: number | null };

export const NO_FILTERS: EventFilters = { type: '', device: '', since: null, until: null };

/** The relay's own rule (libs/events/src/event-log-filter.ts), so live and paged agree. */
export function matchesFilters(e: ConsoleEvent, f: EventFilters): boolean {
  return matchesEventLog(e, eventLogFilter(f));
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
