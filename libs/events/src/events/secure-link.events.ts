import type { Ev } from '../event';

/**
 * Secure Link (spec 4.11): the pinned HTTPS origin. Its identity's pin is public (phones get it in the
 * QR); the key never leaves its file.
 */
export type SecureLinkStarted = Ev<
  'secure_link.started',
  { url: string; port: number; pin: string; source: 'generated' | 'operator'; sans: string[]; notAfter: string; created: boolean }
>;

/** The identity phones pinned is not the one serving now: every phone paired through Secure Link must re-pair. */
export type SecureLinkIdentityChanged = Ev<'secure_link.identity_changed', { previousPin: string; pin: string }>;

/** Secure Link was enabled but could not start (identity, port, openssl): the relay runs without it. */
export type SecureLinkUnavailable = Ev<'secure_link.unavailable', { reason: string }>;

/**
 * The Reach connector's standing with its broker changed: `connected`, `lost` (it was connected and is
 * backing off), or `unavailable` (misconfigured; it will not try). The attempts in between are not logged.
 */
export type SecureLinkReachChanged = Ev<
  'secure_link.reach_changed',
  { state: 'connected' | 'lost' | 'unavailable'; hostId: string | null; error: string | null }
>;

export type SecureLinkEvent = SecureLinkStarted | SecureLinkIdentityChanged | SecureLinkUnavailable | SecureLinkReachChanged;
