import type { ConsoleEvent } from './types';

type D = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));

/** The event families the log colours by (the part before the first dot). */
export function family(type: string): string {
  return type.split('.')[0];
}

/** The session (token prefix) an event concerns, if any: the link from an event to its device. */
export function deviceOf(e: ConsoleEvent): string | null {
  const p = e.data.tokenPrefix;
  if (typeof p === 'string') return p;
  return e.actor.startsWith('device:') ? e.actor.slice(7) : null;
}

export function actorLabel(actor: string): string {
  if (actor === 'operator') return 'operator';
  if (actor === 'system') return 'system';
  if (actor.startsWith('device:')) return `device ${actor.slice(7)}`;
  if (actor.startsWith('public:')) return `public ${actor.slice(7)}`;
  return actor;
}

/** One line in words for the log, the ticker and the overview. Unknown types fall back to their data. */
export function summary(e: ConsoleEvent): string {
  const d = e.data as D;
  switch (e.type) {
    case 'relay.started':
      return `relay ${str(d.version)} started on ${str(d.host)}:${str(d.port)}${d.tls ? ' (TLS)' : ''}${d.recovered ? ' after cutting a torn record' : ''}`;
    case 'relay.stopping':
      return `relay stopping (${str(d.reason)})`;
    case 'pairing.code_registered':
      return `pairing code ${str(d.source === 'mint' ? 'minted' : d.source === 'env' ? 'registered from RELAY_PAIRING_CODE' : 'registered')}, ref ${ref(d.codeDigest)}`;
    case 'pairing.requested':
      return `pairing requested by ${str(d.deviceName) || 'an unnamed device'} from ${str(d.ip)}`;
    case 'pairing.approved':
      return `pairing request ${short(d.requestId)} approved`;
    case 'pairing.denied':
      return `pairing request ${short(d.requestId)} denied`;
    case 'pairing.code_consumed':
      return `code ${ref(d.codeDigest)} used by ${str(d.deviceId)} → session ${str(d.tokenPrefix)}`;
    case 'pairing.code_expired':
      return `pairing code ${ref(d.codeDigest)} expired unused`;
    case 'session.created':
      return `${str(d.deviceName)} paired (session ${str(d.tokenPrefix)})`;
    case 'session.shortened':
      return `session ${str(d.tokenPrefix)} shortened${d.expiresAt ? ` to ${str(d.expiresAt).slice(0, 16).replace('T', ' ')}` : ''}`;
    case 'session.revoked':
      return `session ${str(d.tokenPrefix)} ${d.reason === 'replaced' ? 'replaced by a re-pairing' : `revoked by ${actorLabel(str(d.by))}`}`;
    case 'session.expired':
      return `session ${str(d.tokenPrefix)} expired`;
    case 'session.grant_expired':
      return `grant ${str(d.channel)} of ${str(d.tokenPrefix)} expired`;
    case 'session.seen':
      return `${str(d.tokenPrefix)} seen over ${str(d.via)} from ${str(d.ip)}`;
    case 'phone.connected':
      return `${str(d.tokenPrefix)} connected from ${str(d.ip)}`;
    case 'phone.disconnected':
      return `${str(d.tokenPrefix)} disconnected (${str(d.code)}${d.reason ? `: ${str(d.reason)}` : ''})`;
    case 'auth.failed':
      return `${str(d.kind)} rejected from ${str(d.ip)} over ${str(d.via)}: ${str(d.reason)}`;
    case 'ratelimit.blocked':
      return `${str(d.ip)} blocked until ${str(d.until).slice(11, 19)} (${str(d.kind)} failures)`;
    case 'ratelimit.cleared':
      return d.ip ? `rate-limit block on ${str(d.ip)} cleared` : `all rate-limit blocks cleared (${str(d.reason)})`;
    default: {
      const text = JSON.stringify(e.data);
      return text.length > 120 ? `${text.slice(0, 117)}…` : text;
    }
  }
}

function ref(v: unknown): string {
  return str(v).replace('…', '');
}

function short(v: unknown): string {
  return str(v).slice(0, 8);
}
