import { defaultGrantGroups, pairingDefaultsText } from '@svc/events/grant-channels';
import { DAY, formatDuration } from './durations';
import { CHANNELS, clampIso, DEFAULT_GRANT_SECONDS, grantDurations, grantExpiries } from './grants';
import { DEFAULT_SESSION_SECONDS, pairingTerms } from './pairing/pairing-terms';

const NOW = new Date('2026-03-01T00:00:00.000Z');
const plus = (s: number) => new Date(NOW.getTime() + s * 1000).toISOString();

describe('grants', () => {
  // Wire pins. The grants are spec 2.3's (desktop is named there only as "desktop grant"). The defaults are
  // WIRE.md "Pairing and sessions": "chat = session; terminal and tui = min(session, 30 d); bridge =
  // min(session, 7 d); voice:* = chat", and PROTOCOL.md "Grants on the wire": "`desktop` is opt-in".
  it('the grants a pairing may name are spec 2.3’s', () => {
    const spec = ['chat', 'terminal', 'bridge', 'tui', 'voice:config', 'voice:stt', 'voice:tts', 'voice:realtime', 'desktop'];
    expect([...CHANNELS].sort()).toEqual([...spec].sort());
    for (const channel of spec) expect(grantDurations({ [channel]: 60 })[channel]).toBe(60);
  });

  it('a pairing that names none: chat and voice:* as long as the session, terminal and tui 30 days, bridge 7 days, no desktop', () => {
    const session = plus(365 * DAY);
    expect(grantExpiries(grantDurations(undefined), NOW, session)).toEqual({
      chat: session,
      'voice:config': session,
      'voice:stt': session,
      'voice:tts': session,
      'voice:realtime': session,
      terminal: plus(30 * DAY),
      tui: plus(30 * DAY),
      bridge: plus(7 * DAY),
    });
  });

  it('an opt-in channel is granted only when named, for the duration named', () => {
    expect('desktop' in grantDurations(undefined)).toBe(false);
    expect('desktop' in grantDurations({ terminal: 60 })).toBe(false);
    expect(grantDurations({ desktop: 7 * DAY })).toMatchObject({ desktop: 7 * DAY, chat: null, bridge: 7 * DAY });
    expect(grantDurations({ desktop: null }).desktop).toBeNull();
    expect('desktop' in grantDurations({ desktop: false })).toBe(false);
  });

  it('overrides named channels, removes those set to false, leaves the rest at their defaults', () => {
    const d = grantDurations({ terminal: 3600, bridge: false, chat: 60 });
    expect(d.terminal).toBe(3600);
    expect(d.chat).toBe(60);
    expect('bridge' in d).toBe(false);
    expect(d.tui).toBe(30 * DAY);
  });

  it('refuses an unknown channel', () => {
    expect(() => grantDurations({ shell: 60 })).toThrow(expect.objectContaining({ code: 'validation.grant_channel' }));
  });

  it('clamps every grant to the session expiry', () => {
    const session = plus(DAY);
    const e = grantExpiries(grantDurations(undefined), NOW, session);
    for (const v of Object.values(e)) expect(v).toBe(session);
  });

  it('keeps a grant shorter than the session as it is', () => {
    const e = grantExpiries({ bridge: 3600, chat: null }, NOW, plus(30 * DAY));
    expect(e).toEqual({ bridge: plus(3600), chat: plus(30 * DAY) });
  });

  it('a never-expiring session keeps finite grants finite and session-long grants never', () => {
    const e = grantExpiries(grantDurations(undefined), NOW, null);
    expect(e.chat).toBeNull();
    expect(e.terminal).toBe(plus(30 * DAY));
    expect(e.bridge).toBe(plus(7 * DAY));
  });

  it('writes the default grants in the table’s order (the key order of session.created’s grants)', () => {
    expect(Object.keys(grantDurations(undefined))).toEqual([
      'chat',
      'terminal',
      'tui',
      'bridge',
      'voice:config',
      'voice:stt',
      'voice:tts',
      'voice:realtime',
    ]);
  });

  it('the CLI’s defaults text says what formatDuration says', () => {
    const text = pairingDefaultsText();
    expect(text.session).toBe(formatDuration(DEFAULT_SESSION_SECONDS));
    expect(text.grants).toBe(
      defaultGrantGroups()
        .map((g) => `${g.names.join(', ')}: ${g.seconds === null ? 'session' : formatDuration(g.seconds)}`)
        .join('; '),
    );
  });

  it('clampIso takes the earlier, with null as never', () => {
    expect(clampIso(null, null)).toBeNull();
    expect(clampIso(plus(5), null)).toBe(plus(5));
    expect(clampIso(null, plus(5))).toBe(plus(5));
    expect(clampIso(plus(5), plus(9))).toBe(plus(5));
    expect(clampIso(plus(9), plus(5))).toBe(plus(5));
  });

  describe('pairingTerms (the bounded server defaults)', () => {
    it('defaults to 30 days with the default grants and no transport hint', () => {
      expect(pairingTerms({})).toEqual({ sessionTtlSeconds: 30 * DAY, grants: DEFAULT_GRANT_SECONDS, transportHint: null });
    });

    it('ttl_seconds 0 means never', () => {
      expect(pairingTerms({ ttl_seconds: 0 }).sessionTtlSeconds).toBeNull();
    });

    it('grant values: seconds, durations, never/null, false/off/none', () => {
      const t = pairingTerms({
        grants: { terminal: '1d', bridge: 3600, chat: 'never', tui: null, desktop: false, 'voice:stt': 'off', 'voice:tts': 'none' },
      });
      expect(t.grants).toMatchObject({ terminal: DAY, bridge: 3600, chat: null, tui: null });
      for (const gone of ['desktop', 'voice:stt', 'voice:tts']) expect(gone in t.grants).toBe(false);
    });

    it.each([{ chat: true }, { chat: [] }, { chat: {} }, { chat: 'soon' }, { nope: '1d' }])('refuses grants %p', (grants) => {
      expect(() => pairingTerms({ grants })).toThrow(expect.objectContaining({ kind: 'invalid' }));
    });

    it('validates the transport hint', () => {
      expect(pairingTerms({ transport_hint: 'tailscale' }).transportHint).toBe('tailscale');
      for (const bad of ['', 'has space', 'x'.repeat(33), 'semi;colon']) {
        expect(() => pairingTerms({ transport_hint: bad })).toThrow(expect.objectContaining({ code: 'validation.transport_hint' }));
      }
    });
  });
});
