import type { Ev } from '../event';

/** Channel -> ISO expiry (null: never). Already clamped to the session. */
export type GrantExpiries = Record<string, string | null>;

export type SessionCreated = Ev<
  'session.created',
  {
    tokenDigest: string;
    tokenPrefix: string;
    deviceId: string;
    deviceName: string;
    deviceModel: string | null;
    devicePlatform: string | null;
    /** What the client says it is (absent in events written before these fields existed). */
    deviceHostname?: string | null;
    clientSurface?: string | null;
    deviceFormFactor?: string | null;
    transportHint: string | null;
    expiresAt: string | null;
    grants: GrantExpiries;
    ip: string;
  }
>;
/** A reduction: the new (shorter or equal) expiry and the full new grant set. */
export type SessionShortened = Ev<'session.shortened', { tokenPrefix: string; expiresAt: string | null; grants: GrantExpiries }>;
/**
 * `replaced`: a re-pairing of the same device id took its place. `abandoned`: the phone's socket closed
 * while its pairing was being made durable, so no one ever received the token. `refresh_reuse`: a refresh
 * token of its device that had already been rotated out came back (a copy), so the device's trust ended.
 */
export type SessionRevoked = Ev<
  'session.revoked',
  { tokenPrefix: string; by: string; self: boolean; reason: 'revoked' | 'replaced' | 'abandoned' | 'refresh_reuse' }
>;
export type SessionExpired = Ev<'session.expired', { tokenPrefix: string }>;
export type SessionGrantExpired = Ev<'session.grant_expired', { tokenPrefix: string; channel: string }>;
/** Throttled: at most one a minute per session, so last-seen is state without flooding the log. */
export type SessionSeen = Ev<'session.seen', { tokenPrefix: string; ip: string; via: 'http' | 'ws' }>;

/**
 * A reconnecting client described itself differently (renamed phone, OS update): only the fields that
 * changed, never the session's terms.
 */
export type SessionDeviceUpdated = Ev<
  'session.device_updated',
  {
    tokenPrefix: string;
    deviceName?: string;
    deviceModel?: string | null;
    devicePlatform?: string | null;
    deviceHostname?: string | null;
    clientSurface?: string | null;
    deviceFormFactor?: string | null;
  }
>;

export type SessionEvent =
  SessionCreated | SessionShortened | SessionRevoked | SessionExpired | SessionGrantExpired | SessionSeen | SessionDeviceUpdated;
