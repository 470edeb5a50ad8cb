import {
  DEFAULT_SESSION_SECONDS,
  defaultGrantGroups,
  GRANT_CHANNELS,
  GRANT_DEFAULTS,
  grantNames,
  OPT_IN_GRANTS,
  pairingDefaultsText,
  VOICE_GRANTS,
} from './grant-channels';

const DAY = 86_400;

describe('grant channels: the one table', () => {
  it('holds spec 2.3’s channels, voice:* among them, desktop opt-in', () => {
    expect([...GRANT_CHANNELS].sort()).toEqual(
      ['bridge', 'chat', 'desktop', 'terminal', 'tui', 'voice:config', 'voice:realtime', 'voice:stt', 'voice:tts'].sort(),
    );
    expect([...VOICE_GRANTS].sort()).toEqual(['voice:config', 'voice:realtime', 'voice:stt', 'voice:tts']);
    expect(OPT_IN_GRANTS).toEqual(['desktop']);
    expect(DEFAULT_SESSION_SECONDS).toBe(30 * DAY);
  });

  it('groups the defaults by duration for people: chat and voice for the session, terminal and tui 30 days, bridge 7 days', () => {
    expect(defaultGrantGroups()).toEqual([
      { names: ['chat', 'voice'], seconds: null },
      { names: ['terminal', 'tui'], seconds: 30 * DAY },
      { names: ['bridge'], seconds: 7 * DAY },
    ]);
    expect(pairingDefaultsText()).toEqual({ session: '30d', grants: 'chat, voice: session; terminal, tui: 30d; bridge: 7d' });
  });

  it('reads the four voice grants as one only when all four are there', () => {
    expect(grantNames(['chat', 'voice:config', 'voice:realtime', 'voice:stt', 'voice:tts'])).toEqual(['chat', 'voice']);
    expect(grantNames(['chat', 'voice:stt'])).toEqual(['chat', 'voice:stt']);
    expect(grantNames([])).toEqual([]);
  });

  it('every default is a whole number of seconds, null (the session) or opt_in', () => {
    for (const d of Object.values(GRANT_DEFAULTS)) expect(d === null || d === 'opt_in' || (Number.isInteger(d) && d > 0)).toBe(true);
  });
});
