import type { Ev } from '../event';
import type { PairingTerms } from './pairing.events';

/**
 * Trusted-device renewal (refresh tokens). A trust binds one device id to the terms it was paired with and
 * to one current refresh token, of which the log keeps only the keyed digest. Renewal rotates the token
 * and opens a new session with those terms; a token already rotated out that comes back was copied.
 */

/** `paired`: issued with a new pairing. `adopted`: a device paired before renewal existed got one on reconnect. */
export type TrustIssued = Ev<
  'trust.issued',
  {
    trustId: string;
    deviceId: string;
    /** The session it was issued with. */
    tokenPrefix: string;
    /**
     * The keyed digest of that session's token: renewal needs that token beside the refresh token (the app
     * sends both). Absent in trusts issued before renewal was bound to it: those renew by device id alone once.
     */
    tokenDigest?: string;
    refreshDigest: string;
    expiresAt: string;
    terms: PairingTerms;
    reason: 'paired' | 'adopted';
  }
>;

/**
 * The current refresh token changed. `renewed`: a phone whose session ended presented the current token and
 * got a new session (`tokenPrefix`, created in the same batch). `reissued`: a phone with a live session had
 * lost its token and got a new one. `abandoned`: the socket closed before the renewal's `auth.ok` went out,
 * so the token it carried never left the relay and the previous one is current again. `tokenDigest`: the
 * keyed digest of that session's token, which the next renewal must present (absent before binding).
 */
export type TrustRotated = Ev<
  'trust.rotated',
  { trustId: string; refreshDigest: string; tokenPrefix: string; tokenDigest?: string; reason: 'renewed' | 'reissued' | 'abandoned' }
>;

/**
 * A renewal refused for a known trust (an unknown refresh token is an `auth.failed`). `session_mismatch`: the
 * session token beside the refresh token is not the one it was issued with (a copied refresh token).
 */
export type TrustRefused = Ev<
  'trust.refused',
  { trustId: string; reason: 'device_mismatch' | 'session_mismatch' | 'expired' | 'disabled'; ip: string }
>;

/** A refresh token that was already rotated out came back: it was copied. The trust ends with it. */
export type TrustReuseDetected = Ev<'trust.reuse_detected', { trustId: string; deviceId: string; ip: string }>;

/**
 * The trust is over and its refresh token dead. `revoked`: its device's session was revoked; `replaced`: the
 * device paired again; `operator`: ended by hand, its live session kept; `reuse`: see TrustReuseDetected.
 */
export type TrustEnded = Ev<
  'trust.ended',
  { trustId: string; deviceId: string; reason: 'revoked' | 'replaced' | 'operator' | 'expired' | 'reuse'; by: string }
>;

export type TrustEvent = TrustIssued | TrustRotated | TrustRefused | TrustReuseDetected | TrustEnded;
