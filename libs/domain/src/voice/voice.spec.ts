import type { VoiceSessionCreated } from '@svc/events';
import { relayStarted, voiceSessionCreated } from '../../../../test/support/events';
import { given, T0 } from '../../../../test/support/given';
import {
  changeRelayVoiceSettings,
  detachVoiceSession,
  expireVoiceSessions,
  openVoiceSession,
  recordProfileVoiceSettings,
  resumeVoiceSession,
  setInsecureApiBearer,
  VOICE_SETTING_KEYS,
  voiceSettingProblem,
  voiceSettingsChanges,
} from './voice';

const started = (allowInsecureApiBearer = false) => relayStarted({ allowInsecureApiBearer });
const session = (sessionId: string, over: Partial<VoiceSessionCreated['data']> = {}): VoiceSessionCreated['data'] => ({
  sessionId,
  kind: 'output',
  profile: null,
  provider: 'offline',
  via: 'session',
  expiresAt: new Date(T0.getTime() + 60_000).toISOString(),
  ...over,
});
const created = (sessionId: string, over: Partial<VoiceSessionCreated['data']> = {}) => voiceSessionCreated(session(sessionId, over));

describe('voice rules', () => {
  it('the API-bearer escape hatch: a change is an event with the previous value; the same value is none', () => {
    const g = given([started(false)]);
    g.when((m) => setInsecureApiBearer(m, false)).then([]);
    g.when((m) => setInsecureApiBearer(m, true)).then([{ type: 'relay.security_changed', data: { allowInsecureApiBearer: true, previous: false } }]);
    expect(g.state.models.voice.allowInsecureApiBearer).toBe(true);
    g.when((m) => setInsecureApiBearer(m, true)).then([]);
  });

  it('a setting value: booleans, whole numbers 0-192000, short one-line strings; null removes', () => {
    expect(voiceSettingProblem('enabled', 'bool', true)).toBeNull();
    expect(voiceSettingProblem('enabled', 'bool', 'yes')).toBe('enabled must be true or false');
    expect(voiceSettingProblem('sample_rate', 'int', 24000)).toBeNull();
    for (const bad of [-1, 1.5, 192_001, '24000'])
      expect(voiceSettingProblem('sample_rate', 'int', bad)).toBe('sample_rate must be a whole number from 0 to 192000');
    expect(voiceSettingProblem('voice', 'string', ' alloy ')).toBeNull();
    for (const bad of ['', '   ', 'x'.repeat(129), 'a\nb', 5])
      expect(voiceSettingProblem('voice', 'string', bad)).toBe('voice must be a non-empty string of at most 128 characters');
    for (const kind of ['bool', 'int', 'string'] as const) expect(voiceSettingProblem('k', kind, null)).toBeNull();
  });

  it("a PATCH's changes: unknown keys refused by name, profile skipped, strings trimmed, at least one", () => {
    expect(voiceSettingsChanges('voice_output', ['profile', 'voice', 'enabled'], { voice: ' alloy ', enabled: false, profile: 'work' })).toEqual({
      voice: 'alloy',
      enabled: false,
    });
    expect(voiceSettingsChanges('realtime_voice', ['model'], { model: null })).toEqual({ model: null });
    expect(() => voiceSettingsChanges('realtime_voice', ['voice', 'language'], { voice: 'x', language: 'en' })).toThrow(
      `unknown realtime_voice setting "language"; known: ${Object.keys(VOICE_SETTING_KEYS.realtime_voice).join(', ')}`,
    );
    expect(() => voiceSettingsChanges('voice_output', ['profile'], { profile: 'work' })).toThrow('send at least one voice_output setting to change');
    expect(() => voiceSettingsChanges('voice_output', [], {})).toThrow(expect.objectContaining({ code: 'validation_failed', kind: 'invalid' }));
  });

  it('relay-owned settings: only values that differ from those in effect are an event', () => {
    expect(changeRelayVoiceSettings({ voice: 'alloy', enabled: true }, 'voice_output', { voice: 'alloy', enabled: false })).toEqual([
      { type: 'voice.settings_changed', data: { section: 'voice_output', scope: 'relay', profile: null, changed: { enabled: false } } },
    ]);
    expect(changeRelayVoiceSettings({ voice: 'alloy' }, 'voice_output', { voice: 'alloy' })).toEqual([]);
    const g = given([]);
    g.state.apply(changeRelayVoiceSettings({}, 'realtime_voice', { enabled: true, model: 'm' }));
    expect(g.state.models.voice.settings('realtime_voice')).toEqual({ enabled: true, model: 'm' });
    expect(g.state.models.voice.settings('voice_output')).toEqual({});
  });

  it("a profile's settings are the file's: the event records the file, the relay-owned defaults do not change", () => {
    const file = { path: '/home/x/profiles/work/config.yaml', sha256: 'ab'.repeat(32) };
    const events = recordProfileVoiceSettings('voice_output', 'work', { voice: 'en-gb' }, file);
    expect(events).toEqual([
      { type: 'voice.settings_changed', data: { section: 'voice_output', scope: 'profile', profile: 'work', changed: { voice: 'en-gb' }, file } },
    ]);
    expect(given(events).state.models.voice.settings('voice_output')).toEqual({});
  });

  it('a session is created while its caller holds fewer than the most open sessions; ended ones do not count', () => {
    const g = given([started()]);
    g.state.event(created('a'), T0, 'device:abcd1234');
    g.state.event(created('b'), T0, 'device:other000');
    const refused = g.when((m) => openVoiceSession(m, 'device:abcd1234', 1, session('c'))).thenThrows('rate_limited', 'rate_limited');
    expect(refused.extra).toEqual({ success: false, retry_after: 5, max_open: 1 });
    g.when((m) => openVoiceSession(m, 'device:abcd1234', 2, session('c', { kind: 'realtime_agent', chatSessionId: 'chat-1' }))).then([
      created('c', { kind: 'realtime_agent', chatSessionId: 'chat-1' }),
    ]);
    g.state.event({ type: 'voice.session_ended', data: { sessionId: 'a', kind: 'output', reason: 'closed', chunks: 0, bytes: 0, chars: 0 } });
    g.state.event({ type: 'voice.session_ended', data: { sessionId: 'c', kind: 'realtime_agent', reason: 'closed', chunks: 0, bytes: 0, chars: 0 } });
    expect(openVoiceSession(g.state.models, 'device:abcd1234', 1, session('d'))).toHaveLength(1);
  });

  it('the sweep: a session never opened ends expired at its window, a dropped one resume_expired at its grace; attached ones stay', () => {
    const g = given([started(), created('never'), created('open'), created('dropped')]);
    g.state.apply(detachVoiceSession(g.state.models, 'dropped', 1006, new Date(T0.getTime() + 120_000)));
    expect(g.state.models.voice.session('dropped')).toMatchObject({ detached: true, expiresAt: T0.getTime() + 120_000 });
    const attached = new Set(['open']);
    expect(expireVoiceSessions(g.state.models, new Date(T0.getTime() + 59_999), attached)).toEqual([]);
    const totals = (id: string) => ({ chunks: id.length, bytes: 2, chars: 3 });
    expect(expireVoiceSessions(g.state.models, new Date(T0.getTime() + 60_000), attached, totals)).toEqual([
      { type: 'voice.session_ended', data: { sessionId: 'never', kind: 'output', reason: 'expired', chunks: 5, bytes: 2, chars: 3 } },
    ]);
    expect(expireVoiceSessions(g.state.models, new Date(T0.getTime() + 120_000), attached).map((e) => [e.data.sessionId, e.data.reason])).toEqual([
      ['never', 'expired'],
      ['dropped', 'resume_expired'],
    ]);
  });

  it('a drop and a resume of a session that already ended are nothing; of an open one, events with its kind', () => {
    const g = given([started(), created('s', { kind: 'realtime' })]);
    expect(detachVoiceSession(g.state.models, 'gone', 1006, T0)).toEqual([]);
    expect(resumeVoiceSession(g.state.models, 'gone', 3, 1)).toEqual([]);
    g.state.apply(detachVoiceSession(g.state.models, 's', 1001, new Date(T0.getTime() + 30_000)));
    g.when((m) => resumeVoiceSession(m, 's', 7, 2)).then([
      { type: 'voice.session_resumed', data: { sessionId: 's', kind: 'realtime', fromEventId: 7, replayed: 2 } },
    ]);
    expect(g.state.models.voice.session('s')?.detached).toBe(false);
  });
});
