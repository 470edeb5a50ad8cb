import { epoch, type ProviderUsage, type VoiceCall, type VoiceSession, type VoiceSessionRecord } from '@svc/domain';
import type { VoiceCallRow, VoiceSessionEndedRow, VoiceSessionOpenRow, VoiceUsageRow } from '@svc/console-api';

/** The Voice page's rows, read from the voice read models (never text, audio or a key). */

export function openSessionView(
  s: VoiceSession,
  connected: boolean,
  counts: { drops: number; resumes: number },
  heldBytes: number | null,
): VoiceSessionOpenRow {
  return {
    session_id: s.sessionId,
    kind: s.kind,
    state: s.detached ? 'held' : connected ? 'connected' : 'waiting',
    profile: s.profile,
    provider: s.provider,
    via: s.via,
    actor: s.actor,
    created_at: epoch(s.createdAt),
    expires_at: epoch(s.expiresAt),
    held_bytes: s.detached ? heldBytes : null,
    drops: counts.drops,
    resumes: counts.resumes,
  };
}

export function endedSessionView(s: VoiceSessionRecord): VoiceSessionEndedRow {
  return {
    session_id: s.sessionId,
    kind: s.kind,
    profile: s.profile,
    provider: s.provider,
    via: s.via,
    actor: s.actor,
    created_at: epoch(s.createdAt),
    ended_at: epoch(s.endedAt),
    duration_seconds: Math.max(0, Math.round((s.endedAt - s.createdAt) / 100) / 10),
    reason: s.reason,
    chunks: s.chunks,
    bytes: s.bytes,
    chars: s.chars,
    drops: s.drops,
    resumes: s.resumes,
  };
}

export function voiceCallView(c: VoiceCall): VoiceCallRow {
  return {
    seq: c.seq,
    at: epoch(c.at),
    kind: c.kind,
    provider: c.provider,
    profile: c.profile,
    via: c.via,
    actor: c.actor,
    outcome: c.outcome,
    latency_ms: c.durationMs,
    bytes: c.bytes,
    chars: c.chars,
    audio_seconds: c.audioMs === null ? null : Math.round(c.audioMs / 100) / 10,
    error: c.error,
  };
}

export function usageView(r: ProviderUsage): VoiceUsageRow {
  return {
    provider: r.provider,
    profile: r.profile ?? 'default',
    transcriptions: r.transcriptions,
    syntheses: r.syntheses,
    sessions: r.sessions,
    failures: r.failures,
    characters: r.characters,
    audio_bytes: r.audioBytes,
    audio_seconds: Math.round(r.audioMs / 100) / 10,
    last_used_at: epoch(r.lastUsedAt),
  };
}
