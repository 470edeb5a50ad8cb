import type { ConsoleAccessEvent, NewEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ConsoleAccessProjection } from './console-access.projection';

/** How long a sign-in link may wait to be opened, and how long the browser it signs in stays signed in. */
export const CONSOLE_LINK_TTL_SECONDS = 15 * 60;

/** A new one-time sign-in link (its digest; the link itself exists only in what the operator was shown). */
export function issueConsoleLink(linkDigest: string, now: Date, ttlSeconds = CONSOLE_LINK_TTL_SECONDS): NewEvent<ConsoleAccessEvent>[] {
  return [{ type: 'console.link_issued', data: { linkDigest, expiresAt: new Date(now.getTime() + ttlSeconds * 1000).toISOString() } }];
}

/** Opens the link: once, before it expires. The browser's session lasts `sessionSeconds`. */
export function signInToConsole(
  access: ConsoleAccessProjection,
  cmd: { linkDigest: string; sessionDigest: string; sessionSeconds: number },
  now: Date,
): NewEvent<ConsoleAccessEvent>[] {
  if (access.linkExpiry(cmd.linkDigest, now) === null) {
    throw new DomainError(
      'console.link_invalid',
      'unauthorized',
      'this sign-in link is unknown, already used or expired: run "svc relay console" on the relay\'s machine for a new one',
    );
  }
  const expiresAt = new Date(now.getTime() + cmd.sessionSeconds * 1000).toISOString();
  return [{ type: 'console.signed_in', data: { linkDigest: cmd.linkDigest, sessionDigest: cmd.sessionDigest, expiresAt } }];
}

/** Signs a browser out (nothing is written for a session that already ended). */
export function signOutOfConsole(access: ConsoleAccessProjection, sessionDigest: string, now: Date): NewEvent<ConsoleAccessEvent>[] {
  return access.sessionExpiry(sessionDigest, now) === null ? [] : [{ type: 'console.signed_out', data: { sessionDigest } }];
}
