import type { RelayEvent } from './relay-event';
import { matchesType } from './event-types-match';

/**
 * Every event type of the relay's union, at run time (the union itself is types only): what
 * `svc relay events tail --type` checks a name against. The compiler keeps it whole both ways: a
 * type missing here fails `_everyType`, a name that is no type fails the `satisfies`.
 */
export const EVENT_TYPES = [
  'auth.failed',
  'bridge.active_selected',
  'bridge.command_answered',
  'bridge.command_failed',
  'bridge.command_sent',
  'bridge.safety_decided',
  'bridge.status_reported',
  'chat.image_activity',
  'clipboard.consumed',
  'clipboard.discarded',
  'clipboard.staged',
  'console.link_issued',
  'console.signed_in',
  'console.signed_out',
  'desktop.client_reported',
  'desktop.command_completed',
  'desktop.command_sent',
  'desktop.context_reported',
  'desktop.control_session_ended',
  'desktop.control_session_started',
  'media.evicted',
  'media.expired',
  'media.fetched',
  'media.marked_sensitive',
  'media.refused',
  'media.registered',
  'media.retired',
  'media.uploaded',
  'notification.posted',
  'notification.removed',
  'pairing.approved',
  'pairing.code_consumed',
  'pairing.code_expired',
  'pairing.code_registered',
  'pairing.denied',
  'pairing.requested',
  'personal.forgotten',
  'phone.backlog_flushed',
  'phone.connected',
  'phone.disconnected',
  'phone.message_cancelled',
  'phone.message_delivered',
  'phone.message_dropped',
  'phone.message_expired',
  'phone.message_posted',
  'phone.replies_handed',
  'phone.reply_received',
  'phone.subscribed',
  'phone.unsubscribed',
  'profile.catalog_changed',
  'profile.file_written',
  'profile.relay_enabled',
  'ratelimit.blocked',
  'ratelimit.cleared',
  'relay.security_changed',
  'relay.started',
  'relay.stopping',
  'secure_link.identity_changed',
  'secure_link.reach_changed',
  'secure_link.started',
  'secure_link.unavailable',
  'session.created',
  'session.device_updated',
  'session.expired',
  'session.grant_expired',
  'session.revoked',
  'session.seen',
  'session.shortened',
  'store.checkpoint_signed',
  'terminal.closed',
  'terminal.detached',
  'terminal.opened',
  'terminal.reattached',
  'terminal.recording_removed',
  'terminal.recording_saved',
  'trust.ended',
  'trust.issued',
  'trust.refused',
  'trust.reuse_detected',
  'trust.rotated',
  'tui.started',
  'tui.stopped',
  'voice.session_created',
  'voice.session_detached',
  'voice.session_ended',
  'voice.session_resumed',
  'voice.settings_changed',
  'voice.synthesized',
  'voice.transcribed',
] as const satisfies ReadonlyArray<RelayEvent['type']>;

const _everyType: [Exclude<RelayEvent['type'], (typeof EVENT_TYPES)[number]>] extends [never] ? true : never = true;
void _everyType;

/** The families (`session`, `pairing`...): what `--type session` names. */
export const EVENT_FAMILIES: readonly string[] = [...new Set(EVENT_TYPES.map((t) => t.slice(0, t.indexOf('.'))))];

/** A `--type` spec (one, already parsed: `session.`, `session.revoked`) names at least one event type. */
export function namesAnEventType(spec: string): boolean {
  return EVENT_TYPES.some((t) => matchesType(t, [spec]));
}

/** Edit distance with a cut-off: rows of at most 40 cells, stops once every cell passes `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, row[j]);
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length];
}

/**
 * The known families and types closest to a name that matched none, best first (at most `limit`): a
 * family or type it begins or ends (`revoked` -> `session.revoked`), or one a few typing slips away
 * (`sesion` -> `session`). Plain string work, no regular expression built from the input.
 */
export function closeEventTypes(spec: string, limit = 5): string[] {
  const s = spec.trim().toLowerCase().replace(/\.$/, '');
  if (s === '' || s.length > 64) return [];
  const max = Math.max(1, Math.floor(s.length / 3));
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of [...EVENT_FAMILIES, ...EVENT_TYPES]) {
    const action = name.slice(name.indexOf('.') + 1);
    let score: number;
    if (name.startsWith(s) || (name.includes('.') && action.startsWith(s))) score = 0;
    else score = Math.min(distance(s, name, max), name.includes('.') ? distance(s, action, max) : max + 1);
    if (score <= max) scored.push({ name, score });
  }
  return scored
    .toSorted((x, y) => x.score - y.score || x.name.length - y.name.length || x.name.localeCompare(y.name))
    .slice(0, limit)
    .map((x) => x.name);
}
