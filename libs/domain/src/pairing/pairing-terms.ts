import type { PairingTerms } from '@svc/events';
import { DEFAULT_SESSION_SECONDS } from '@svc/events/grant-channels';
import { parseDuration } from '../durations';
import { DomainError } from '../errors';
import { grantDurations } from '../grants';

export { DEFAULT_SESSION_SECONDS };

export type TermsInput = {
  ttl_seconds?: number;
  grants?: Record<string, unknown>;
  transport_hint?: string | null;
};

const HINT_RE = /^[a-z0-9_.:-]{1,32}$/i;

/**
 * The bounded server defaults for what a pairing grants: 30 days unless `ttl_seconds` says otherwise
 * (0: never), grants from WIRE.md's defaults with the named channels overridden (`false` removes one).
 */
export function pairingTerms(input: TermsInput): PairingTerms {
  const sessionTtlSeconds = input.ttl_seconds === undefined ? DEFAULT_SESSION_SECONDS : parseDuration(input.ttl_seconds, 'ttl_seconds');
  const requested: Record<string, number | null | false> = {};
  for (const [channel, value] of Object.entries(input.grants ?? {})) {
    if (value === false || value === 'off' || value === 'none') requested[channel] = false;
    else if (typeof value === 'number' || typeof value === 'string') requested[channel] = parseDuration(value, `grants.${channel}`);
    else if (value === null) requested[channel] = null;
    else throw new DomainError('validation.grant', 'invalid', `grants.${channel}: must be seconds, a duration like 7d, "never" or false`);
  }
  const hint = input.transport_hint ?? null;
  if (hint !== null && !HINT_RE.test(hint)) {
    throw new DomainError('validation.transport_hint', 'invalid', 'transport_hint: 1-32 letters, digits or _.:-');
  }
  return { sessionTtlSeconds, grants: grantDurations(requested), transportHint: hint };
}
