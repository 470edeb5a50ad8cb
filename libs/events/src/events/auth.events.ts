import type { Ev } from '../event';

export type AuthKind = 'code' | 'token';

/** A rejected credential. The credential itself is never recorded. */
export type AuthFailed = Ev<'auth.failed', { ip: string; kind: AuthKind; via: 'http' | 'ws'; reason: string }>;
export type RateLimitBlocked = Ev<'ratelimit.blocked', { ip: string; kind: AuthKind; until: string }>;
/** `ip: null` clears every block (a successful `/pairing/register` does that). */
export type RateLimitCleared = Ev<'ratelimit.cleared', { ip: string | null; reason: string }>;

export type AuthEvent = AuthFailed | RateLimitBlocked | RateLimitCleared;
