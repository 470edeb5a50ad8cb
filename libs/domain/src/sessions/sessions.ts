import type { GrantExpiries, NewEvent, SessionDeviceUpdated, SessionEvent, SessionRevoked, SessionShortened, TrustEnded } from '@svc/events';
import { parseDuration } from '../durations';
import { DomainError } from '../errors';
import { isGrantChannel } from '../grants';
import { actorOf, type Principal } from '../principal';
import type { ReadModels } from '../read-models';
import { isLive, liveAt, liveGrants, type Session } from './sessions.projection';

export const MIN_PREFIX = 4;

/** The one live session a token prefix names: 404 on none, 409 when several share it. */
export function findByPrefix(m: ReadModels, prefix: string, now: Date): Session {
  if (typeof prefix !== 'string' || prefix.length < MIN_PREFIX) {
    throw new DomainError('sessions.prefix_too_short', 'invalid', `a token prefix needs at least ${MIN_PREFIX} characters`);
  }
  const hits = m.sessions.matching(prefix, now);
  if (hits.length === 0) throw new DomainError('sessions.not_found', 'not_found', 'no session matches that token prefix');
  if (hits.length > 1) {
    throw new DomainError('sessions.ambiguous_prefix', 'conflict', `${hits.length} sessions match that prefix; give more characters`, {
      matches: hits.length,
    });
  }
  return hits[0];
}

/** Any paired device may revoke any other (single-operator trust model); the operator too. */
export function revokeSession(m: ReadModels, prefix: string, caller: Principal, now: Date): NewEvent<SessionRevoked | TrustEnded>[] {
  const target = findByPrefix(m, prefix, now);
  const self = caller.kind === 'device' && caller.tokenPrefix === target.tokenPrefix;
  // A revoked device's refresh token dies with it: renewal must not undo the revocation.
  const trust = target.deviceId === '' ? undefined : m.trust.forDevice(target.deviceId);
  return [
    { type: 'session.revoked', data: { tokenPrefix: target.tokenPrefix, by: actorOf(caller), self, reason: 'revoked' } },
    ...(trust
      ? [
          {
            type: 'trust.ended' as const,
            data: { trustId: trust.trustId, deviceId: trust.deviceId, reason: 'revoked' as const, by: actorOf(caller) },
          },
        ]
      : []),
  ];
}

/**
 * A device that pairs again (or renews) replaces its live sessions: one session per device id. Nothing
 * for a client without a device id.
 */
export function replaceDeviceSessions(m: ReadModels, deviceId: string, now: Date): NewEvent<SessionRevoked>[] {
  if (deviceId === '') return [];
  return m.sessions
    .active(now)
    .filter((s) => s.deviceId === deviceId)
    .map((s) => ({ type: 'session.revoked', data: { tokenPrefix: s.tokenPrefix, by: 'system', self: false, reason: 'replaced' } }));
}

/**
 * A session made by a pairing whose socket closed before `auth.ok` went out: nobody holds its token, so
 * it is revoked at once (by `system`) rather than left listed and unusable. Nothing if it is already gone.
 */
export function abandonSession(m: ReadModels, tokenPrefix: string): NewEvent<SessionEvent | TrustEnded>[] {
  const s = m.sessions.byTokenPrefix(tokenPrefix);
  if (!s) return [];
  // The refresh token issued with it never left the relay either.
  const trust = s.deviceId === '' ? undefined : m.trust.forDevice(s.deviceId);
  return [
    { type: 'session.revoked', data: { tokenPrefix, by: 'system', self: false, reason: 'abandoned' } },
    ...(trust && trust.tokenPrefix === tokenPrefix
      ? [{ type: 'trust.ended' as const, data: { trustId: trust.trustId, deviceId: trust.deviceId, reason: 'revoked' as const, by: 'system' } }]
      : []),
  ];
}

export type ShortenInput = {
  /** New lifetime from now in seconds (0: never, which only a never-expiring session may keep). */
  ttl_seconds?: number;
  /** Channel -> new duration from now (seconds or `7d`), or false to drop the grant. */
  grants?: Record<string, unknown>;
};

const REDUCTION_ONLY =
  'extending needs a new pairing: sessions only shrink here; a longer lifetime, an added or longer grant, never-expire or a change to another device needs a fresh operator-approved pairing';

/** Refusals of anything but a reduction: 422, so the app shows "HTTP 422: Extending needs a new pairing". */
const reductionOnly = () => new DomainError('reduction_only', 'needs_pairing', REDUCTION_ONLY);

/** Clock skew the app's grant arithmetic may add (it re-sends every grant as seconds from its own now). */
const SKEW_MS = 2000;

/**
 * PATCH: reduction only. The caller may shorten its own lifetime or grants; the operator may shorten any.
 * Grants are re-clamped to the new lifetime.
 */
export function shortenSession(m: ReadModels, prefix: string, caller: Principal, input: ShortenInput, now: Date): NewEvent<SessionShortened>[] {
  const target = findByPrefix(m, prefix, now);
  // Another device's session is not the caller's to change at all (403, the reference relay's and the
  // spec's rule), even to shorten it; only an extension of one's own is the 422 below.
  if (caller.kind === 'device' && caller.tokenPrefix !== target.tokenPrefix) {
    throw new DomainError(
      'sessions.not_yours',
      'forbidden',
      "a device may change only its own session; revoke another device's session instead (DELETE /sessions/{token_prefix})",
    );
  }
  if (input.ttl_seconds === undefined && input.grants === undefined) {
    throw new DomainError('validation.empty', 'invalid', 'give ttl_seconds or grants to shorten');
  }
  const t = now.getTime();
  let expiresAt = target.expiresAt;
  if (input.ttl_seconds !== undefined) {
    const seconds = parseDuration(input.ttl_seconds, 'ttl_seconds');
    const wanted = seconds === null ? null : t + seconds * 1000;
    if (!notLater(wanted, target.expiresAt)) throw reductionOnly();
    expiresAt = wanted;
  }
  const live = liveGrants(target, now);
  const grants = { ...live };
  for (const [channel, value] of Object.entries(input.grants ?? {})) {
    if (!isGrantChannel(channel)) throw new DomainError('validation.grant_channel', 'invalid', `grants: unknown channel "${channel}"`);
    if (!(channel in grants)) throw reductionOnly();
    if (value === false || value === null) {
      delete grants[channel];
      continue;
    }
    if (typeof value !== 'number' && typeof value !== 'string') {
      throw new DomainError('validation.grant', 'invalid', `grants.${channel}: seconds, a duration like 1h, or false`);
    }
    const seconds = parseDuration(value, `grants.${channel}`);
    let wanted = seconds === null ? null : t + seconds * 1000;
    // The app re-sends every grant it keeps as whole seconds from its own clock: a value a moment past
    // the current expiry means "keep it", not "extend it".
    const current = grants[channel];
    if (wanted !== null && current !== null && wanted > current && wanted - current <= SKEW_MS) wanted = current;
    if (!notLater(wanted, current)) throw reductionOnly();
    grants[channel] = wanted;
  }
  const next: Record<string, number | null> = {};
  for (const [channel, until] of Object.entries(grants)) next[channel] = clampMs(until, expiresAt);
  // Nothing would change (`{grants: {}}`, or values equal to the current ones): no event.
  if (expiresAt === target.expiresAt && sameGrants(next, live)) return [];
  const out: GrantExpiries = {};
  for (const [channel, until] of Object.entries(next)) out[channel] = iso(until);
  return [{ type: 'session.shortened', data: { tokenPrefix: target.tokenPrefix, expiresAt: iso(expiresAt), grants: out } }];
}

function sameGrants(a: Record<string, number | null>, b: Record<string, number | null>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => k in b && a[k] === b[k]);
}

/** The sweep: sessions past their lifetime, and grants past theirs. */
export function expireSessions(m: ReadModels, now: Date): NewEvent<SessionEvent>[] {
  const out: NewEvent<SessionEvent>[] = m.sessions.overdue(now).map((s) => ({ type: 'session.expired', data: { tokenPrefix: s.tokenPrefix } }));
  for (const s of m.sessions.active(now)) {
    for (const [channel, until] of Object.entries(s.grants)) {
      if (!liveAt(until, now)) out.push({ type: 'session.grant_expired', data: { tokenPrefix: s.tokenPrefix, channel } });
    }
  }
  return out;
}

type DeviceFields = Omit<SessionDeviceUpdated['data'], 'tokenPrefix'>;

/**
 * A reconnect (`system/auth` with a session token) that describes the device: the fields the frame
 * carried and that differ from the session's are recorded; nothing when all match or the session is gone.
 */
export function updateDevice(m: ReadModels, tokenPrefix: string, sent: DeviceFields): NewEvent<SessionEvent>[] {
  const s = m.sessions.byTokenPrefix(tokenPrefix);
  if (!s) return [];
  const changed: DeviceFields = {};
  for (const k of Object.keys(sent) as Array<keyof DeviceFields>) {
    if (sent[k] !== undefined && sent[k] !== s[k]) (changed as Record<string, unknown>)[k] = sent[k];
  }
  if (Object.keys(changed).length === 0) return [];
  return [{ type: 'session.device_updated', data: { tokenPrefix, ...changed } }];
}

export const SEEN_EVERY_SECONDS = 60;

/** Last-seen is state, written at most once a minute per session. */
export function markSeen(m: ReadModels, tokenPrefix: string, ip: string, via: 'http' | 'ws', now: Date): NewEvent<SessionEvent>[] {
  const s = m.sessions.byTokenPrefix(tokenPrefix);
  if (!s || !isLive(s, now) || now.getTime() - s.lastSeen < SEEN_EVERY_SECONDS * 1000) return [];
  return [{ type: 'session.seen', data: { tokenPrefix, ip, via } }];
}

const notLater = (a: number | null, b: number | null): boolean => (b === null ? true : a !== null && a <= b);
const clampMs = (a: number | null, limit: number | null): number | null => (limit === null ? a : a === null ? limit : Math.min(a, limit));
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
