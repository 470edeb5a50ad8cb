import { isoMs } from './epoch';
import type { GrantDurations, GrantExpiries } from '@svc/events';
import { GRANT_CHANNELS, GRANT_DEFAULTS, OPT_IN_GRANTS, type GrantChannel } from '@svc/events/grant-channels';
import { DomainError } from './errors';

/** Every grantable channel (spec 2.3), from the one table (libs/events grant-channels.ts). The desktop grant is named `desktop`. */
export const CHANNELS = GRANT_CHANNELS;
export type { GrantChannel };

export function isGrantChannel(name: string): name is GrantChannel {
  return (CHANNELS as readonly string[]).includes(name);
}

/**
 * Channels a pairing gets only when the operator names them (`svc relay pair --grants desktop=7d`,
 * `grants: {desktop: ...}`). `desktop` lets a device drive the tools of a connected desktop (a shell and
 * files on another machine) from anywhere, and serve tools to the agent: the reference relay lets
 * neither happen from a phone at all (its `/desktop/*` is loopback only), and no phone client needs it.
 */
export const OPT_IN_CHANNELS: readonly GrantChannel[] = OPT_IN_GRANTS;

/** WIRE.md defaults, before clamping to the session: null means "as long as the session". Opt-in channels have none. */
export const DEFAULT_GRANT_SECONDS: Readonly<Partial<Record<GrantChannel, number | null>>> = Object.fromEntries(
  CHANNELS.flatMap((c) => {
    const d = GRANT_DEFAULTS[c];
    return d === 'opt_in' ? [] : [[c, d]];
  }),
);

/**
 * The grant set a pairing asks for: the defaults, with each channel the operator named set to its own
 * duration (or removed, when the value is `false`); an opt-in channel only when named.
 */
export function grantDurations(requested: Record<string, number | null | false> | undefined): GrantDurations {
  const out: GrantDurations = { ...DEFAULT_GRANT_SECONDS };
  for (const [channel, seconds] of Object.entries(requested ?? {})) {
    if (!isGrantChannel(channel)) {
      throw new DomainError('validation.grant_channel', 'invalid', `grants: unknown channel "${channel}" (known: ${CHANNELS.join(', ')})`);
    }
    if (seconds === false) delete out[channel];
    else out[channel] = seconds;
  }
  return out;
}

/** Turns durations into absolute expiries from `now`, each clamped to the session's expiry. */
export function grantExpiries(durations: GrantDurations, now: Date, sessionExpiresAt: string | null): GrantExpiries {
  const out: GrantExpiries = {};
  for (const [channel, seconds] of Object.entries(durations)) {
    out[channel] = clampIso(seconds === null ? null : new Date(now.getTime() + seconds * 1000).toISOString(), sessionExpiresAt);
  }
  return out;
}

/** The earlier of two expiries, where null is "never". */
export function clampIso(expiry: string | null, limit: string | null): string | null {
  if (limit === null) return expiry;
  if (expiry === null) return limit;
  return isoMs(expiry) <= isoMs(limit) ? expiry : limit;
}
