import type {
  NewEvent,
  RelaySecurityChanged,
  VoiceSection,
  VoiceSessionDetached,
  VoiceSessionEnded,
  VoiceSessionResumed,
  VoiceSettingsChanged,
  VoiceSettingValue,
} from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';

/** Spec 8: `/voice/synthesize` text is at most 5,000 characters (also the streaming session's per-frame cap). */
export const MAX_TTS_CHARS = 5000;

/** The operator turns the plain-HTTP API-bearer escape hatch on or off (until restart). No change, no event. */
export function setInsecureApiBearer(models: ReadModels, allow: boolean): NewEvent<RelaySecurityChanged>[] {
  const previous = models.voice.allowInsecureApiBearer;
  if (previous === allow) return [];
  return [{ type: 'relay.security_changed', data: { allowInsecureApiBearer: allow, previous } }];
}

/** What each section's PATCH may set, and each value's kind. Anything else is refused by name. */
export const VOICE_SETTING_KEYS: Record<VoiceSection, Record<string, 'string' | 'int' | 'bool'>> = {
  voice_output: {
    enabled: 'bool',
    provider: 'string',
    model: 'string',
    voice: 'string',
    sample_rate: 'int',
    language: 'string',
    codec: 'string',
    optimize_streaming_latency: 'int',
    text_normalization: 'bool',
    auto_speech_tags: 'bool',
    fallback_enabled: 'bool',
  },
  realtime_voice: { enabled: 'bool', provider: 'string', model: 'string', voice: 'string', sample_rate: 'int' },
  realtime_agent: { enabled: 'bool', provider: 'string', model: 'string', voice: 'string', sample_rate: 'int', fallback_engine: 'string' },
};

/**
 * Checks a PATCH body's settings (flat scalars, known keys, sane sizes) and returns the changes. `profile`
 * is not a setting (it picks where the change is written) and is skipped here.
 */
export function parseVoiceSettingsPatch(section: VoiceSection, body: Record<string, unknown>): Record<string, VoiceSettingValue> {
  const allowed = VOICE_SETTING_KEYS[section];
  const out: Record<string, VoiceSettingValue> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'profile') continue;
    const kind = allowed[key];
    if (!kind)
      throw new DomainError(
        'validation_failed',
        'invalid',
        `unknown ${section} setting "${key.slice(0, 64)}"; known: ${Object.keys(allowed).join(', ')}`,
      );
    if (value === null) {
      out[key] = null;
      continue;
    }
    if (kind === 'bool' && typeof value !== 'boolean') throw new DomainError('validation_failed', 'invalid', `${key} must be true or false`);
    if (kind === 'int' && !(Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 192_000))
      throw new DomainError('validation_failed', 'invalid', `${key} must be a whole number from 0 to 192000`);
    if (kind === 'string' && !(typeof value === 'string' && value.trim() !== '' && value.length <= 128 && !/[\x00-\x1f]/.test(value)))
      throw new DomainError('validation_failed', 'invalid', `${key} must be a non-empty string of at most 128 characters`);
    out[key] = kind === 'string' ? (value as string).trim() : (value as VoiceSettingValue);
  }
  if (Object.keys(out).length === 0) throw new DomainError('validation_failed', 'invalid', `send at least one ${section} setting to change`);
  return out;
}

/**
 * The relay-owned defaults change (PATCH without a profile). Values equal to the effective ones (`current`:
 * built-in defaults under what earlier PATCHes set) are dropped; no change, no event.
 */
export function changeRelayVoiceSettings(
  current: Readonly<Record<string, unknown>>,
  section: VoiceSection,
  changed: Record<string, VoiceSettingValue>,
): NewEvent<VoiceSettingsChanged>[] {
  const diff = Object.fromEntries(Object.entries(changed).filter(([k, v]) => current[k] !== v));
  if (Object.keys(diff).length === 0) return [];
  return [{ type: 'voice.settings_changed', data: { section, scope: 'relay', profile: null, changed: diff } }];
}

/** A profile's config file was rewritten with these settings (the file is the state; the event its audit). */
export function recordProfileVoiceSettings(
  section: VoiceSection,
  profile: string,
  changed: Record<string, VoiceSettingValue>,
  file: { path: string; sha256: string },
): NewEvent<VoiceSettingsChanged>[] {
  return [{ type: 'voice.settings_changed', data: { section, scope: 'profile', profile, changed, file } }];
}

/** A created voice session must open its socket within this (the reference's clients connect at once). */
export const VOICE_SESSION_CONNECT_SECONDS = 60;

/**
 * The scheduler's sweep: sessions created but never opened whose connect window passed end as `expired`;
 * sessions whose socket dropped and that were not resumed within the grace end as `resume_expired`.
 * `attached` holds the sessions with a socket now (and those whose drop is being recorded).
 */
export function expireVoiceSessions(
  models: ReadModels,
  now: Date,
  attached: ReadonlySet<string>,
  totals: (sessionId: string) => { chunks: number; bytes: number; chars: number } = () => ({ chunks: 0, bytes: 0, chars: 0 }),
): NewEvent<VoiceSessionEnded>[] {
  return models.voice
    .openSessions()
    .filter((s) => s.expiresAt <= now.getTime() && !attached.has(s.sessionId))
    .map((s) => ({
      type: 'voice.session_ended',
      data: { sessionId: s.sessionId, kind: s.kind, reason: s.detached ? 'resume_expired' : 'expired', ...totals(s.sessionId) },
    }));
}

/** The drop of a session's socket, held for a resume until `resumeUntil` (nothing when it already ended). */
export function detachVoiceSession(models: ReadModels, sessionId: string, code: number, resumeUntil: Date): NewEvent<VoiceSessionDetached>[] {
  const s = models.voice.session(sessionId);
  if (!s) return [];
  return [{ type: 'voice.session_detached', data: { sessionId, kind: s.kind, code, resumeUntil: resumeUntil.toISOString() } }];
}

/** A new socket took a held session over (nothing when it already ended). */
export function resumeVoiceSession(models: ReadModels, sessionId: string, fromEventId: number, replayed: number): NewEvent<VoiceSessionResumed>[] {
  const s = models.voice.session(sessionId);
  if (!s) return [];
  return [{ type: 'voice.session_resumed', data: { sessionId, kind: s.kind, fromEventId, replayed } }];
}
