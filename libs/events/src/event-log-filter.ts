import { matchesType, parseTypeSpecs, type TypeSpecs } from './event-types-match';

/**
 * The console log's filters, one rule for the relay's pages (`/console/api/events`) and the browser's live
 * tail (so the two agree). `types`: parsed type specs (event-types-match.ts); `device`: a token prefix or a
 * device id, matched against the actor and the event's `tokenPrefix`/`deviceId`; `since`/`until`: epoch
 * ms, inclusive. Pure, no Node: the console's browser build imports it.
 */
export type EventLogFilter = { types?: TypeSpecs; device?: string; since?: number; until?: number };

/** What the filter reads of an event: a stored one, or the console's redacted view of it. */
export type FilterableEvent = { type: string; at: string; actor: string; data: unknown };

/** The filter of the raw inputs (a comma list of types, a device, epoch ms bounds); blanks are "any". */
export function eventLogFilter(raw: { type?: string; device?: string; since?: number | null; until?: number | null }): EventLogFilter {
  const device = raw.device?.trim();
  return {
    types: parseTypeSpecs(raw.type),
    device: device || undefined,
    since: raw.since ?? undefined,
    until: raw.until ?? undefined,
  };
}

export function matchesEventLog(e: FilterableEvent, f: EventLogFilter): boolean {
  if (!matchesType(e.type, f.types)) return false;
  if (f.since !== undefined || f.until !== undefined) {
    const t = Date.parse(e.at);
    if (f.since !== undefined && t < f.since) return false;
    if (f.until !== undefined && t > f.until) return false;
  }
  if (f.device) {
    const d = f.device;
    const data = (e.data ?? {}) as { tokenPrefix?: unknown; deviceId?: unknown };
    const actorPrefix = e.actor.startsWith('device:') ? e.actor.slice(7) : null;
    const hit =
      (typeof data.tokenPrefix === 'string' && data.tokenPrefix.startsWith(d)) ||
      (actorPrefix !== null && actorPrefix.startsWith(d)) ||
      (typeof data.deviceId === 'string' && data.deviceId === d);
    if (!hit) return false;
  }
  return true;
}

export function isFiltered(f: EventLogFilter): boolean {
  return Boolean(f.types || f.device || f.since !== undefined || f.until !== undefined);
}
