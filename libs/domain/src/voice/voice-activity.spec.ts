import { relayStarted, voiceSessionCreated, voiceSessionEnded, voiceSynthesized, voiceTranscribed } from '../../../../test/support/events';
import { at, Given, T0 } from '../../../../test/support/given';
import { ReadModels } from '../read-models';
import { VOICE_CALLS_KEPT, VOICE_SESSIONS_KEPT } from './voice-activity.projection';

describe('voice activity (the console history)', () => {
  it('keeps each call with its outcome, latency and sizes, newest first, and never text', () => {
    const g = new Given();
    g.event(voiceTranscribed({ durationMs: 340, audioMs: 2100 }), T0, 'device:aaaa1111');
    g.event(voiceSynthesized({ outcome: 'failed', durationMs: 12, bytes: 0, error: 'voice.provider_unavailable', via: 'api' }), at(T0, 5), 'api');
    const calls = g.models.voiceActivity.recentCalls();
    expect(calls).toEqual([
      {
        seq: 2,
        at: at(T0, 5).getTime(),
        kind: 'synthesize',
        provider: 'offline',
        profile: null,
        via: 'api',
        actor: 'api',
        outcome: 'failed',
        durationMs: 12,
        bytes: 0,
        chars: 20,
        audioMs: null,
        error: 'voice.provider_unavailable',
      },
      {
        seq: 1,
        at: T0.getTime(),
        kind: 'transcribe',
        provider: 'offline',
        profile: null,
        via: 'session',
        actor: 'device:aaaa1111',
        outcome: 'ok',
        durationMs: 340,
        bytes: 32_000,
        chars: 11,
        audioMs: 2100,
        error: null,
      },
    ]);
  });

  it(`keeps the newest ${VOICE_CALLS_KEPT} calls and ${VOICE_SESSIONS_KEPT} ended sessions`, () => {
    const g = new Given();
    for (let i = 0; i < VOICE_CALLS_KEPT + 20; i++) g.event(voiceSynthesized({ durationMs: i }));
    for (let i = 0; i < VOICE_SESSIONS_KEPT + 5; i++)
      g.apply([voiceSessionCreated({ sessionId: `s${i}` }), voiceSessionEnded({ sessionId: `s${i}` })]);
    const calls = g.models.voiceActivity.recentCalls();
    expect(calls).toHaveLength(VOICE_CALLS_KEPT);
    expect(calls[0].durationMs).toBe(VOICE_CALLS_KEPT + 19);
    expect(calls.at(-1)!.durationMs).toBe(20);
    const sessions = g.models.voiceActivity.recentSessions();
    expect(sessions).toHaveLength(VOICE_SESSIONS_KEPT);
    expect(sessions[0].sessionId).toBe(`s${VOICE_SESSIONS_KEPT + 4}`);
  });

  it('an ended session carries what its creation said, its drops and resumes, its reason and totals', () => {
    const g = new Given();
    g.event(voiceSessionCreated({ sessionId: 'rt', kind: 'realtime', profile: 'work', provider: 'openai' }), T0, 'device:bbbb2222');
    g.event(
      { type: 'voice.session_detached', data: { sessionId: 'rt', kind: 'realtime', code: 1006, resumeUntil: at(T0, 40).toISOString() } },
      at(T0, 10),
    );
    expect(g.models.voiceActivity.resumesOf('rt')).toEqual({ drops: 1, resumes: 0 });
    g.event({ type: 'voice.session_resumed', data: { sessionId: 'rt', kind: 'realtime', fromEventId: 4, replayed: 2 } }, at(T0, 12));
    g.event(voiceSessionEnded({ sessionId: 'rt', kind: 'realtime', reason: 'closed', chunks: 7, bytes: 700, chars: 70 }), at(T0, 30));
    expect(g.models.voiceActivity.recentSessions()).toEqual([
      {
        sessionId: 'rt',
        kind: 'realtime',
        provider: 'openai',
        profile: 'work',
        via: 'session',
        actor: 'device:bbbb2222',
        createdAt: T0.getTime(),
        endedAt: at(T0, 30).getTime(),
        reason: 'closed',
        chunks: 7,
        bytes: 700,
        chars: 70,
        drops: 1,
        resumes: 1,
      },
    ]);
    // An end for a session it never saw open (a log that began later) adds nothing.
    g.event(voiceSessionEnded({ sessionId: 'unknown' }));
    expect(g.models.voiceActivity.recentSessions()).toHaveLength(1);
  });

  it('a start ends the sessions still open as relay_restarted (nothing recorded their end)', () => {
    const g = new Given();
    g.apply([voiceSessionCreated({ sessionId: 'a' }), voiceSessionCreated({ sessionId: 'b' }), voiceSessionEnded({ sessionId: 'b' })]);
    g.event(relayStarted(), at(T0, 100));
    expect(g.models.voiceActivity.recentSessions().map((s) => [s.sessionId, s.reason, s.endedAt])).toEqual([
      ['a', 'relay_restarted', at(T0, 100).getTime()],
      ['b', 'closed', T0.getTime()],
    ]);
    g.event(relayStarted());
    expect(g.models.voiceActivity.recentSessions()).toHaveLength(2);
  });

  it('the same event twice is harmless, and a snapshot restores to the same history', () => {
    const g = new Given();
    g.apply([voiceTranscribed(), voiceSessionCreated(), voiceSynthesized()]);
    g.event({ type: 'voice.session_detached', data: { sessionId: 's1', kind: 'output', code: 1006, resumeUntil: at(T0, 30).toISOString() } });
    const twice = new ReadModels();
    for (const e of g.log) {
      twice.apply(e);
      twice.apply(e);
    }
    expect(twice.voiceActivity.snapshot()).toEqual(g.models.voiceActivity.snapshot());
    expect(twice.voiceActivity.resumesOf('s1')).toEqual({ drops: 1, resumes: 0 });
    const restored = new ReadModels();
    restored.restore(JSON.parse(JSON.stringify(g.models.snapshot())) as Record<string, unknown>);
    expect(restored.voiceActivity.snapshot()).toEqual(g.models.voiceActivity.snapshot());
    // The session open in the snapshot still ends with its creation's fields.
    g.event(voiceSessionEnded(), undefined, 'x');
    const e = g.log.at(-1)!;
    restored.apply(e);
    expect(restored.voiceActivity.recentSessions()).toEqual(g.models.voiceActivity.recentSessions());
  });
});
