import type { Ev } from '../event';

/** Seconds per channel (null: as long as the session). Omitted channels were not granted. */
export type GrantDurations = Record<string, number | null>;

/** What a code turns into once a phone consumes it. */
export type PairingTerms = {
  /** Session lifetime in seconds; null means the session never expires. */
  sessionTtlSeconds: number | null;
  grants: GrantDurations;
  transportHint: string | null;
};

/** A usable code (host-made, minted, from RELAY_PAIRING_CODE, or an approved public request). */
export type PairingCodeRegistered = Ev<
  'pairing.code_registered',
  { codeDigest: string; source: 'register' | 'mint' | 'env'; expiresAt: string; terms: PairingTerms }
>;
/** A public `POST /pairing` request: a code that works only after the operator approves it. */
export type PairingRequested = Ev<
  'pairing.requested',
  { requestId: string; codeDigest: string; expiresAt: string; ip: string; deviceName: string | null }
>;
export type PairingApproved = Ev<'pairing.approved', { requestId: string; codeDigest: string; terms: PairingTerms }>;
export type PairingDenied = Ev<'pairing.denied', { requestId: string; codeDigest: string }>;
export type PairingCodeConsumed = Ev<'pairing.code_consumed', { codeDigest: string; tokenPrefix: string; deviceId: string }>;
export type PairingCodeExpired = Ev<'pairing.code_expired', { codeDigest: string; requestId: string | null }>;

export type PairingEvent = PairingCodeRegistered | PairingRequested | PairingApproved | PairingDenied | PairingCodeConsumed | PairingCodeExpired;
