import type { ConsoleEvent, StoredRelayEvent } from '@svc/events';

export type { ConsoleEvent };

/** Keys that must never reach a browser, even if a future event carried one by mistake. */
// Not bare `key`: a notification's `key` is Android's id for it, not a credential.
const SECRET_KEY_RE =
  /^(?:token|session_?token|refresh_?token|refresh_?digest|pairing_?code|code|api_?key|secret|secret_?key|private_?key|password|passphrase|bearer|authorization|cookie)$/i;
const DIGEST_KEY_RE = /digest$/i;

/** Deep copy of event data with digests truncated and secret-named fields replaced. */
export function redact(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (SECRET_KEY_RE.test(key)) return '[redacted]';
    if (DIGEST_KEY_RE.test(key)) return value.length > 8 ? `${value.slice(0, 8)}…` : value;
    return value;
  }
  // Numbers and booleans are never secrets (a `code` here is a WebSocket close code).
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, key));
  if (SECRET_KEY_RE.test(key)) return '[redacted]';
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redact(v, k);
  return out;
}

/** Stored events are immutable, so each is redacted once, however often the console shows it. */
const views = new WeakMap<StoredRelayEvent, ConsoleEvent>();

export function toConsoleEvent(e: StoredRelayEvent): ConsoleEvent {
  let view = views.get(e);
  if (!view) {
    view = {
      seq: e.seq,
      id: e.id,
      at: e.at,
      type: e.type,
      actor: e.actor,
      data: redact(e.data) as Record<string, unknown>,
      hash: e.hash.slice(0, 12),
    };
    views.set(e, view);
  }
  return view;
}

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
