import type { Ev } from '../event';

/**
 * The operator's console sign-in (issue 34): a one-time link, printed by `svc relay start` and
 * `svc relay console`, turns into a browser session (an HttpOnly cookie). Only keyed digests of the link
 * and of the cookie are recorded, never the values.
 */
export type ConsoleLinkIssued = Ev<'console.link_issued', { linkDigest: string; expiresAt: string }>;
export type ConsoleSignedIn = Ev<'console.signed_in', { linkDigest: string; sessionDigest: string; expiresAt: string }>;
export type ConsoleSignedOut = Ev<'console.signed_out', { sessionDigest: string }>;

export type ConsoleAccessEvent = ConsoleLinkIssued | ConsoleSignedIn | ConsoleSignedOut;
