import { withoutPersonal, type ConsoleEvent, type StoredRelayEvent } from '@svc/events';
import { fieldNamePattern, SECRET_FIELDS } from '../common/auth/secret-fields';

/**
 * Keys that must never reach a browser, even if a future event carried one by mistake: the shared list in
 * any spelling (event data is camelCase), and a bare `code` when it is a string (a number is a close code).
 * Not bare `key`: a notification's `key` is Android's id for it, not a credential.
 */
const SECRET_KEY_RE = fieldNamePattern([...SECRET_FIELDS, 'code']);
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
      // Never personal content (notification text, Thread messages and replies): only that it is sealed or forgotten.
      data: redact(withoutPersonal(e).data) as Record<string, unknown>,
      hash: e.hash.slice(0, 12),
    };
    views.set(e, view);
  }
  return view;
}
