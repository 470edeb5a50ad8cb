import type { AuthEvent, AuthKind, NewEvent } from '@svc/events';
import { DomainError } from '../errors';
import { DEFAULT_RATE_LIMIT, rateLimitSubject, type RateLimitPolicy, type RateLimitProjection } from './rate-limit.projection';

export type AuthFailure = { ip: string; kind: AuthKind; via: 'http' | 'ws'; reason: string };

/** Records a rejected credential; the failure that crosses the threshold also sets the block. */
export function recordAuthFailure(
  limits: RateLimitProjection,
  failure: AuthFailure,
  now: Date,
  policy: RateLimitPolicy = DEFAULT_RATE_LIMIT,
): NewEvent<AuthEvent>[] {
  const events: NewEvent<AuthEvent>[] = [{ type: 'auth.failed', data: failure }];
  const rule = policy[failure.kind];
  if (
    limits.blockedUntil(failure.ip, now) === null &&
    limits.failuresWithin(failure.ip, failure.kind, now, rule.windowSeconds) + 1 >= rule.failures
  ) {
    const until = new Date(now.getTime() + rule.blockSeconds * 1000).toISOString();
    events.push({ type: 'ratelimit.blocked', data: { ip: failure.ip, kind: failure.kind, until } });
  }
  return events;
}

export function assertNotBlocked(limits: RateLimitProjection, ip: string, now: Date): void {
  const until = limits.blockedUntil(ip, now);
  if (until !== null) {
    const retryAfter = Math.ceil((until - now.getTime()) / 1000);
    throw new DomainError('auth.rate_limited', 'rate_limited', `too many failed attempts from this address; retry in ${retryAfter} s`, {
      retry_after: retryAfter,
    });
  }
}

/** A successful host registration clears every block (spec 7); nothing is written when none exists. */
export function clearAllBlocks(limits: RateLimitProjection, now: Date, reason: string): NewEvent<AuthEvent>[] {
  return limits.activeBlocks(now).length > 0 ? [{ type: 'ratelimit.cleared', data: { ip: null, reason } }] : [];
}

/** Why the operator's unblock is recorded: the reason `ratelimit.cleared` carries. */
export const UNBLOCK_REASON = 'unblocked by the operator';

/**
 * The operator lifts one block before it ends (the console's Unblock, `svc relay blocks unblock`). `address`
 * is the block's subject as listed, or any address it covers (an IPv6 address of a blocked /64). The block's
 * failure counts go with it, so the next bad attempt starts a fresh window.
 */
export function unblockAddress(limits: RateLimitProjection, address: string, now: Date): NewEvent<AuthEvent>[] {
  const subject = rateLimitSubject(address.trim());
  if (limits.blockedUntil(subject, now) === null) {
    throw new DomainError('ratelimit.not_blocked', 'not_found', `no rate-limit block is in force for ${subject}`);
  }
  return [{ type: 'ratelimit.cleared', data: { ip: subject, reason: UNBLOCK_REASON } }];
}
