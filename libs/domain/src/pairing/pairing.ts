import type { NewEvent, PairingApproved, PairingDenied, PairingEvent, PairingRequested, PairingTerms, RelayEvent } from '@svc/events';
import { DomainError } from '../errors';
import { grantExpiries } from '../grants';
import type { ReadModels } from '../read-models';
import { assertNotBlocked, clearAllBlocks } from '../rate-limit/rate-limit';
import { CODE_TTL_SECONDS } from './pairing-code';
import type { DeviceInfo } from './device-info';

export type { DeviceInfo } from './device-info';
import { replaceDeviceSessions } from '../sessions/sessions';
import { issueTrust, type TrustIssue, type TrustPolicy } from '../trust/trust';

type Out = NewEvent<RelayEvent>[];

const expiry = (now: Date, seconds: number): string => new Date(now.getTime() + seconds * 1000).toISOString();

/** A host-made code (register, mint, RELAY_PAIRING_CODE). Usable at once, for 10 minutes, once. */
export function registerCode(m: ReadModels, cmd: { codeDigest: string; source: 'register' | 'mint' | 'env'; terms: PairingTerms }, now: Date): Out {
  const existing = m.pairing.get(cmd.codeDigest);
  if (existing && existing.expiresAt > now.getTime()) {
    throw new DomainError('pairing.code_exists', 'conflict', 'this pairing code is already registered and not yet used');
  }
  return [
    ...(existing ? [{ type: 'pairing.code_expired' as const, data: { codeDigest: existing.codeDigest, requestId: existing.requestId } }] : []),
    {
      type: 'pairing.code_registered',
      data: { codeDigest: cmd.codeDigest, source: cmd.source, expiresAt: expiry(now, CODE_TTL_SECONDS), terms: cmd.terms },
    },
    ...clearAllBlocks(m.rateLimit, now, `pairing code registered (${cmd.source})`),
  ];
}

export const PUBLIC_REQUESTS_PER_IP = 5;
export const PUBLIC_REQUEST_WINDOW_SECONDS = 600;
export const MAX_PENDING_REQUESTS = 20;

/** `POST /pairing`: a pending code that only an operator's approval makes usable. */
export function requestPairing(
  m: ReadModels,
  cmd: { codeDigest: string; requestId: string; ip: string; deviceName: string | null },
  now: Date,
): NewEvent<PairingRequested>[] {
  // A blocked address is refused here too (WIRE.md: blocked IPs get 429 on pairing).
  assertNotBlocked(m.rateLimit, cmd.ip, now);
  const live = m.pairing.live(now);
  const pending = live.filter((c) => c.state === 'pending');
  const fromIp = pending.filter((c) => c.ip === cmd.ip && now.getTime() - c.registeredAt < PUBLIC_REQUEST_WINDOW_SECONDS * 1000);
  if (fromIp.length >= PUBLIC_REQUESTS_PER_IP) {
    throw new DomainError(
      'pairing.too_many_requests',
      'rate_limited',
      `at most ${PUBLIC_REQUESTS_PER_IP} pending pairing requests per address; wait for the operator`,
      {
        retry_after: PUBLIC_REQUEST_WINDOW_SECONDS,
      },
    );
  }
  if (pending.length >= MAX_PENDING_REQUESTS) {
    throw new DomainError('pairing.pending_full', 'unavailable', 'too many pairing requests are waiting for approval; try again later');
  }
  if (m.pairing.get(cmd.codeDigest)) throw new DomainError('pairing.code_exists', 'conflict', 'code collision; request again');
  return [{ type: 'pairing.requested', data: { ...cmd, expiresAt: expiry(now, CODE_TTL_SECONDS) } }];
}

function findPending(m: ReadModels, ref: { requestId?: string; codeDigest?: string }, now: Date) {
  const code = ref.requestId ? m.pairing.byRequestId(ref.requestId) : ref.codeDigest ? m.pairing.get(ref.codeDigest) : undefined;
  if (!code || code.expiresAt <= now.getTime()) {
    throw new DomainError('pairing.not_found', 'not_found', 'no pending pairing request matches (it may have expired)');
  }
  if (code.state !== 'pending' || !code.requestId) {
    throw new DomainError('pairing.not_pending', 'conflict', 'that code is already usable; nothing to approve');
  }
  return code as typeof code & { requestId: string };
}

export function approvePairing(
  m: ReadModels,
  ref: { requestId?: string; codeDigest?: string },
  terms: PairingTerms,
  now: Date,
): NewEvent<PairingApproved>[] {
  const code = findPending(m, ref, now);
  return [{ type: 'pairing.approved', data: { requestId: code.requestId, codeDigest: code.codeDigest, terms } }];
}

export function denyPairing(m: ReadModels, ref: { requestId?: string; codeDigest?: string }, now: Date): NewEvent<PairingDenied>[] {
  const code = findPending(m, ref, now);
  return [{ type: 'pairing.denied', data: { requestId: code.requestId, codeDigest: code.codeDigest } }];
}

/**
 * What the phone chose at pairing (the app's TTL picker, the QR's grants echoed back): caps on what the
 * code grants, never more. `ttlSeconds` null = never; a grant null = as long as the session.
 */
export type PairingChoices = { ttlSeconds?: number | null; grants?: Record<string, number | null> };

/** The code's terms narrowed by the phone's choices: each the shorter of the two (null is never). */
export function narrowTerms(terms: PairingTerms, choices: PairingChoices | undefined): PairingTerms {
  if (!choices) return terms;
  const shorter = (a: number | null, b: number | null | undefined): number | null =>
    b === undefined ? a : a === null ? b : b === null ? a : Math.min(a, b);
  const grants = { ...terms.grants };
  for (const [channel, wanted] of Object.entries(choices.grants ?? {})) {
    if (channel in grants) grants[channel] = shorter(grants[channel], wanted);
  }
  return { ...terms, sessionTtlSeconds: shorter(terms.sessionTtlSeconds, choices.ttlSeconds), grants };
}

export const INVALID_CREDENTIALS = 'Invalid pairing code or session token';

/** Why a pairing code did not pair: how it ended, or `unknown` (never registered, mistyped, or long forgotten). */
export type CodeRefusal = 'expired' | 'used' | 'denied' | 'unknown';

/**
 * What the phone reads in `auth.fail`, with what to do next. Worded for the app's own mapping
 * (AuthManager.kt humanizeAuthFailReason): "expired" without "invalid"/"unknown" reads as expired, "already
 * used" as used. Why saying which is safe: docs/PROTOCOL.md, Pairing.
 */
export const CODE_REFUSALS: Readonly<Record<CodeRefusal, string>> = {
  expired: "Pairing code expired (a code lasts 10 minutes): mint a new one on the relay host (svc relay pair, or the console's Pairing page)",
  used: "Pairing code already used (a code pairs one phone, once): mint a new one on the relay host (svc relay pair, or the console's Pairing page)",
  denied: 'Pairing request denied by the operator: ask them for a new code',
  unknown: "Unknown pairing code: check each character, or mint a new one on the relay host (svc relay pair, or the console's Pairing page)",
};

function refuseCode(state: CodeRefusal): DomainError {
  return new DomainError('auth.invalid_credentials', 'unauthorized', CODE_REFUSALS[state], { code_state: state });
}

/**
 * A phone's first `system/auth` with a code: consume it and create the session. Re-pairing with the same
 * device id replaces that device's older session.
 */
export function consumeCode(
  m: ReadModels,
  cmd: {
    codeDigest: string;
    tokenDigest: string;
    tokenPrefix: string;
    device: DeviceInfo;
    ip: string;
    choices?: PairingChoices;
    /** The socket's own transport, the hint when the code set none (as the reference relay does). */
    transport?: 'ws' | 'wss';
    /** The refresh token issued with the session (trusted-device renewal); null or absent: none. */
    trust?: { issue: TrustIssue | null; policy: TrustPolicy };
  },
  now: Date,
): Out {
  const code = m.pairing.get(cmd.codeDigest);
  if (!code) throw refuseCode(m.pairing.ended(cmd.codeDigest) ?? 'unknown');
  if (code.expiresAt <= now.getTime()) throw refuseCode('expired'); // its expiry is not swept yet
  if (code.state === 'pending' || !code.terms) {
    throw new DomainError('auth.pending_approval', 'unauthorized', 'Pairing request awaiting operator approval');
  }
  if (m.sessions.byTokenPrefix(cmd.tokenPrefix)) throw new DomainError('auth.token_collision', 'conflict', 'token prefix collision; retry');
  const terms = narrowTerms(code.terms, cmd.choices);
  const expiresAt = terms.sessionTtlSeconds === null ? null : expiry(now, terms.sessionTtlSeconds);
  return [
    { type: 'pairing.code_consumed', data: { codeDigest: code.codeDigest, tokenPrefix: cmd.tokenPrefix, deviceId: cmd.device.deviceId } },
    ...replaceDeviceSessions(m, cmd.device.deviceId, now),
    {
      type: 'session.created',
      data: {
        tokenDigest: cmd.tokenDigest,
        tokenPrefix: cmd.tokenPrefix,
        ...cmd.device,
        transportHint: terms.transportHint ?? cmd.transport ?? null,
        expiresAt,
        grants: grantExpiries(terms.grants, now, expiresAt),
        ip: cmd.ip,
      },
    },
    ...(cmd.trust
      ? issueTrust(
          m,
          {
            deviceId: cmd.device.deviceId,
            tokenPrefix: cmd.tokenPrefix,
            tokenDigest: cmd.tokenDigest,
            terms,
            reason: 'paired',
            issue: cmd.trust.issue,
          },
          cmd.trust.policy,
          now,
        )
      : []),
  ];
}

/** The sweep: codes whose ten minutes have passed. */
export function expireCodes(m: ReadModels, now: Date): NewEvent<PairingEvent>[] {
  return m.pairing.overdue(now).map((c) => ({ type: 'pairing.code_expired', data: { codeDigest: c.codeDigest, requestId: c.requestId } }));
}
