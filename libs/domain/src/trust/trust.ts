import type { NewEvent, PairingTerms, RelayEvent, SessionRevoked, TrustEnded, TrustEvent } from '@svc/events';
import { DomainError } from '../errors';
import { grantExpiries } from '../grants';
import type { DeviceInfo } from '../pairing/device-info';
import { actorOf, type Principal } from '../principal';
import type { ReadModels } from '../read-models';
import { findByPrefix, replaceDeviceSessions } from '../sessions/sessions';
import type { Session } from '../sessions/sessions.projection';
import type { Trust } from './trust.projection';

type Out = NewEvent<RelayEvent>[];

/** A fresh refresh token's identity, made by the edge (random id, keyed digest of the token). */
export type TrustIssue = { trustId: string; refreshDigest: string };

/** RELAY_REFRESH_TTL_DAYS as milliseconds; 0 turns renewal off. */
export type TrustPolicy = { ttlMs: number };

const iso = (ms: number): string => new Date(ms).toISOString();

const ended = (t: Trust, reason: TrustEnded['data']['reason'], by: string): NewEvent<TrustEnded> => ({
  type: 'trust.ended',
  data: { trustId: t.trustId, deviceId: t.deviceId, reason, by },
});

/**
 * A new pairing's trust: the device's older trust ends (`replaced`) and a new refresh token is issued with
 * the terms the pairing gave. Nothing when renewal is off or the device has no id to bind it to.
 */
export function issueTrust(
  m: ReadModels,
  cmd: { deviceId: string; tokenPrefix: string; tokenDigest: string; terms: PairingTerms; reason: 'paired' | 'adopted'; issue: TrustIssue | null },
  policy: TrustPolicy,
  now: Date,
): NewEvent<TrustEvent>[] {
  if (!cmd.issue || policy.ttlMs <= 0 || cmd.deviceId === '') return [];
  const old = m.trust.forDevice(cmd.deviceId);
  return [
    ...(old ? [ended(old, 'replaced', 'system')] : []),
    {
      type: 'trust.issued',
      data: {
        trustId: cmd.issue.trustId,
        deviceId: cmd.deviceId,
        tokenPrefix: cmd.tokenPrefix,
        tokenDigest: cmd.tokenDigest,
        refreshDigest: cmd.issue.refreshDigest,
        expiresAt: iso(now.getTime() + policy.ttlMs),
        terms: cmd.terms,
        reason: cmd.reason,
      },
    },
  ];
}

/** A trust's end with everything its device still holds: used when a copied refresh token shows up. */
function reuse(m: ReadModels, t: Trust, ip: string, now: Date): Out {
  const sessions = m.sessions.active(now).filter((s) => s.deviceId === t.deviceId);
  return [
    { type: 'trust.reuse_detected', data: { trustId: t.trustId, deviceId: t.deviceId, ip } },
    ended(t, 'reuse', 'system'),
    ...sessions.map((s): NewEvent<SessionRevoked> => ({
      type: 'session.revoked',
      data: { tokenPrefix: s.tokenPrefix, by: 'system', self: false, reason: 'refresh_reuse' },
    })),
  ];
}

/** What a device paired before renewal existed was given, read back from its session. */
export function termsOfSession(s: Session): PairingTerms {
  const from = s.createdAt;
  const seconds = (until: number | null) => (until === null ? null : Math.max(1, Math.round((until - from) / 1000)));
  const grants: Record<string, number | null> = {};
  for (const [channel, until] of Object.entries(s.grants)) grants[channel] = seconds(until);
  return { sessionTtlSeconds: seconds(s.expiresAt), grants, transportHint: s.transportHint };
}

/**
 * A reconnect with a live session. A refresh token that was rotated out beside the very session its latest
 * rotation opened (the trust's current session) is the device's own, one rotation behind: its `auth.ok` was
 * lost (a network change swapped its socket mid-renewal, as the app's reconnect does); only that device holds
 * the session token, so it gets a fresh refresh token (`trust.rotated reissued`) instead of being signed out.
 * The reference relay lets a live session in whatever refresh token rides beside it
 * (plugin/relay/server.py:4299-4330); we do too, and put its refresh token right. Beside any other live
 * session a rotated-out token means a copy (an older pair that someone kept after the device moved on): the
 * trust ends and the device's sessions with it (refresh-token reuse detection, RFC 9700 4.14.2). A device with
 * no trust yet (paired before renewal existed) adopts one. A current token, or none for a device that has a
 * trust (a client that does not keep refresh tokens), is left alone: no event per reconnect.
 */
export function reconnectTrust(
  m: ReadModels,
  session: Session,
  cmd: { sentDigest: string | null; issue: TrustIssue | null; ip: string },
  policy: TrustPolicy,
  now: Date,
): Out {
  if (cmd.sentDigest !== null) {
    const owner = m.trust.retiredOwner(cmd.sentDigest);
    if (owner && owner.tokenPrefix === session.tokenPrefix && owner.deviceId === session.deviceId && cmd.issue) {
      return [
        {
          type: 'trust.rotated',
          data: {
            trustId: owner.trustId,
            refreshDigest: cmd.issue.refreshDigest,
            tokenPrefix: session.tokenPrefix,
            tokenDigest: session.tokenDigest,
            reason: 'reissued',
          },
        },
      ];
    }
    if (owner) return reuse(m, owner, cmd.ip, now);
  }
  if (session.deviceId === '' || m.trust.forDevice(session.deviceId)) return [];
  return issueTrust(
    m,
    {
      deviceId: session.deviceId,
      tokenPrefix: session.tokenPrefix,
      tokenDigest: session.tokenDigest,
      terms: termsOfSession(session),
      reason: 'adopted',
      issue: cmd.issue,
    },
    policy,
    now,
  );
}

export type RenewCommand = {
  refreshDigest: string;
  /** The keyed digest of the session token sent beside it (the app sends its last one); null: none sent. */
  sessionDigest: string | null;
  /** The new refresh token and session the renewal hands out. */
  next: TrustIssue;
  tokenDigest: string;
  tokenPrefix: string;
  device: DeviceInfo;
  ip: string;
  transport: 'ws' | 'wss';
};

/**
 * A phone whose session ended (or is unknown) presents its refresh token. The current token of a live trust,
 * from the device it was issued to and beside the session token it was issued with, rotates and opens a new
 * session with the paired terms (the device's live sessions are replaced, as by a re-pairing). The device id
 * alone binds nothing (any paired device lists them), so a refresh token copied without its session token
 * renews nothing. A rotated-out token is a copy: the trust ends. Refusals of a known trust are recorded; an
 * unknown token gives no event (the edge counts it as a failed credential).
 */
export function renewTrust(m: ReadModels, cmd: RenewCommand, policy: TrustPolicy, now: Date): Out {
  const retired = m.trust.retiredOwner(cmd.refreshDigest);
  if (retired) return reuse(m, retired, cmd.ip, now);
  const t = m.trust.byRefreshDigest(cmd.refreshDigest);
  if (!t) return [];
  if (policy.ttlMs <= 0) return [{ type: 'trust.refused', data: { trustId: t.trustId, reason: 'disabled', ip: cmd.ip } }];
  if (t.expiresAt <= now.getTime()) {
    return [{ type: 'trust.refused', data: { trustId: t.trustId, reason: 'expired', ip: cmd.ip } }, ended(t, 'expired', 'system')];
  }
  if (cmd.device.deviceId !== t.deviceId) return [{ type: 'trust.refused', data: { trustId: t.trustId, reason: 'device_mismatch', ip: cmd.ip } }];
  if (t.tokenDigest !== null && cmd.sessionDigest !== t.tokenDigest) {
    return [{ type: 'trust.refused', data: { trustId: t.trustId, reason: 'session_mismatch', ip: cmd.ip } }];
  }
  if (m.sessions.byTokenPrefix(cmd.tokenPrefix)) throw new DomainError('auth.token_collision', 'conflict', 'token prefix collision; retry');
  const terms = t.terms;
  const expiresAt = terms.sessionTtlSeconds === null ? null : iso(now.getTime() + terms.sessionTtlSeconds * 1000);
  return [
    {
      type: 'trust.rotated',
      data: {
        trustId: t.trustId,
        refreshDigest: cmd.next.refreshDigest,
        tokenPrefix: cmd.tokenPrefix,
        tokenDigest: cmd.tokenDigest,
        reason: 'renewed',
      },
    },
    ...replaceDeviceSessions(m, t.deviceId, now),
    {
      type: 'session.created',
      data: {
        tokenDigest: cmd.tokenDigest,
        tokenPrefix: cmd.tokenPrefix,
        ...cmd.device,
        transportHint: terms.transportHint ?? cmd.transport,
        expiresAt,
        grants: grantExpiries(terms.grants, now, expiresAt),
        ip: cmd.ip,
      },
    },
  ];
}

/**
 * The socket closed before a renewal's `auth.ok` went out: nobody holds the new session or refresh token.
 * The new session is revoked and the previous token is current again (it never stopped being the phone's).
 */
export function abandonRenewal(
  m: ReadModels,
  cmd: { trustId: string; previousDigest: string; previousPrefix: string; previousTokenDigest: string | null; newPrefix: string },
): Out {
  const t = m.trust.get(cmd.trustId);
  const out: Out = [];
  if (t) {
    out.push({
      type: 'trust.rotated',
      data: {
        trustId: t.trustId,
        refreshDigest: cmd.previousDigest,
        tokenPrefix: cmd.previousPrefix,
        // The phone still holds the previous session token: its next renewal presents it.
        ...(cmd.previousTokenDigest !== null ? { tokenDigest: cmd.previousTokenDigest } : {}),
        reason: 'abandoned',
      },
    });
  }
  if (m.sessions.byTokenPrefix(cmd.newPrefix)) {
    out.push({ type: 'session.revoked', data: { tokenPrefix: cmd.newPrefix, by: 'system', self: false, reason: 'abandoned' } });
  }
  return out;
}

/** The operator (or a paired device, as with revocation) ends a device's trust and keeps its live session. */
export function endTrust(m: ReadModels, prefix: string, caller: Principal, now: Date): NewEvent<TrustEnded>[] {
  const s = findByPrefix(m, prefix, now);
  const t = s.deviceId === '' ? undefined : m.trust.forDevice(s.deviceId);
  if (!t) throw new DomainError('trust.not_found', 'not_found', 'this device has no trusted-device renewal to end');
  return [ended(t, 'operator', actorOf(caller))];
}

/**
 * The operator ends the renewal of a device whose session already ended (it expired: the device would
 * renew it with its refresh token on its next connect). Named by device id, as no session is left to
 * name it by; a device with a live session goes through `endTrust` (its session prefix), the same event.
 */
export function endDeviceTrust(m: ReadModels, deviceId: string, caller: Principal, now: Date): NewEvent<TrustEnded>[] {
  const t = deviceId === '' ? undefined : m.trust.forDevice(deviceId);
  if (!t || t.expiresAt <= now.getTime()) {
    throw new DomainError('trust.not_found', 'not_found', 'no device with that id has a trusted-device renewal to end');
  }
  return [ended(t, 'operator', actorOf(caller))];
}

/** The sweep: trusts past their lifetime. */
export function expireTrusts(m: ReadModels, now: Date): NewEvent<TrustEnded>[] {
  return m.trust.overdue(now).map((t) => ended(t, 'expired', 'system'));
}
