import type { StoredRelayEvent } from '@svc/events';

/**
 * The log view's filters. `types`: exact types or prefixes (`session.` or `session.*`); `device`: a token
 * prefix (4+ chars) or device id, matched against the actor and the event's `tokenPrefix`/`deviceId`;
 * `since`/`until`: epoch ms, inclusive.
 */
export type EventFilter = { types?: string[]; device?: string; since?: number; until?: number };

export function parseTypes(raw: string | undefined): string[] | undefined {
  if (!raw) return undefined;
  const list = raw
    .split(',')
    .map((t) => t.trim().replace(/\*$/, ''))
    .filter(Boolean);
  return list.length ? list : undefined;
}

export function matches(e: StoredRelayEvent, f: EventFilter): boolean {
  if (f.types && !f.types.some((t) => (t.endsWith('.') ? e.type.startsWith(t) : e.type === t || e.type.startsWith(`${t}.`)))) return false;
  if (f.since !== undefined || f.until !== undefined) {
    const t = Date.parse(e.at);
    if (f.since !== undefined && t < f.since) return false;
    if (f.until !== undefined && t > f.until) return false;
  }
  if (f.device) {
    const d = f.device;
    const data = e.data as { tokenPrefix?: unknown; deviceId?: unknown };
    const prefix = typeof data.tokenPrefix === 'string' ? data.tokenPrefix : null;
    const actorPrefix = e.actor.startsWith('device:') ? e.actor.slice(7) : null;
    const hit =
      (prefix !== null && prefix.startsWith(d)) ||
      (actorPrefix !== null && actorPrefix.startsWith(d)) ||
      (typeof data.deviceId === 'string' && data.deviceId === d);
    if (!hit) return false;
  }
  return true;
}

export function isFiltered(f: EventFilter): boolean {
  return Boolean(f.types || f.device || f.since !== undefined || f.until !== undefined);
}
