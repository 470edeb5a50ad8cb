/**
 * The grantable channels (spec 2.3) and what a pairing that names none of them gets (WIRE.md "Pairing and
 * sessions"): the one table the relay's grant rules (libs/domain grants.ts), `svc relay pair`'s texts and
 * the console's pairing presets and grant chips are built from. Pure, no imports: the console's browser
 * build takes this module as it is.
 */

const DAY = 86_400;

/** A session's lifetime when the pairing names none; every grant is clamped to it. */
export const DEFAULT_SESSION_SECONDS = 30 * DAY;

/**
 * Channel -> its default grant: seconds, `null` as long as the session, `'opt_in'` only when the operator
 * names it (`desktop` drives a connected desktop's shell and files; grants.ts says why it is opt-in). The
 * order is the order a pairing's grants are written in (`session.created`).
 */
export const GRANT_DEFAULTS = {
  chat: null,
  terminal: 30 * DAY,
  tui: 30 * DAY,
  bridge: 7 * DAY,
  'voice:config': null,
  'voice:stt': null,
  'voice:tts': null,
  'voice:realtime': null,
  desktop: 'opt_in',
} as const satisfies Record<string, number | null | 'opt_in'>;

export type GrantChannel = keyof typeof GRANT_DEFAULTS;

/** Every grantable channel. */
export const GRANT_CHANNELS: readonly GrantChannel[] = Object.keys(GRANT_DEFAULTS) as GrantChannel[];

/** The four `voice:*` grants: they default together, and people read them as one, `voice`. */
export const VOICE_GRANTS: readonly GrantChannel[] = GRANT_CHANNELS.filter((c) => c.startsWith('voice:'));

/** Channel names as people read them: all four voice grants, when all are there, as one `voice` (last). */
export function grantNames(channels: readonly string[]): string[] {
  if (!VOICE_GRANTS.every((v) => channels.includes(v))) return [...channels];
  return [...channels.filter((c) => !(VOICE_GRANTS as readonly string[]).includes(c)), 'voice'];
}

/**
 * The defaults grouped by duration for people to read, in table order (opt-in channels left out):
 * `chat, voice` for the session (null), `terminal, tui` 30 days, `bridge` 7 days.
 */
export function defaultGrantGroups(): Array<{ names: string[]; seconds: number | null }> {
  const groups = new Map<number | null, string[]>();
  for (const channel of GRANT_CHANNELS) {
    const d = GRANT_DEFAULTS[channel];
    if (d !== 'opt_in') groups.set(d, [...(groups.get(d) ?? []), channel]);
  }
  return [...groups].map(([seconds, channels]) => ({ names: grantNames(channels), seconds }));
}

/** Channels granted only when named. */
export const OPT_IN_GRANTS: readonly GrantChannel[] = GRANT_CHANNELS.filter((c) => GRANT_DEFAULTS[c] === 'opt_in');

/**
 * The defaults as the CLI prints them (`svc relay pair`, its help): the session `30d`; the grants
 * `chat, voice: session; terminal, tui: 30d; bridge: 7d`. Written here, not with the domain's
 * formatDuration, so that `svc --help` need not load the domain; grant-channels.spec.ts holds the two equal.
 */
export function pairingDefaultsText(): { session: string; grants: string } {
  const short = (s: number): string => (s % DAY === 0 ? `${s / DAY}d` : `${s}s`);
  return {
    session: short(DEFAULT_SESSION_SECONDS),
    grants: defaultGrantGroups()
      .map((g) => `${g.names.join(', ')}: ${g.seconds === null ? 'session' : short(g.seconds)}`)
      .join('; '),
  };
}
