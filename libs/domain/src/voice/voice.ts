import type {
  NewEvent,
  RelaySecurityChanged,
  VoiceSection,
  VoiceSessionCreated,
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
/** Mic audio one realtime session takes in all (counted and acknowledged, not kept past its turn). */
export const MAX_INPUT_AUDIO_BYTES = 16 * 1024 * 1024;
/** The realtime agent keeps this much conversation: the app sends at most 14 messages of at most 1,500 characters. */
export const MAX_CONTEXT_MESSAGES = 14;
export const MAX_CONTEXT_CHARS = 1500;

/** The operator turns the plain-HTTP API-bearer escape hatch on or off (until restart). No change, no event. */
export function setInsecureApiBearer(models: ReadModels, allow: boolean): NewEvent<RelaySecurityChanged>[] {
  const previous = models.voice.allowInsecureApiBearer;
  if (previous === allow) return [];
  return [{ type: 'relay.security_changed', data: { allowInsecureApiBearer: allow, previous } }];
}

/** The kinds of value a voice setting takes. */
export type VoiceSettingKind = 'string' | 'int' | 'bool';

/** What each section's PATCH may set, and each value's kind. Anything else is refused by name. */
export const VOICE_SETTING_KEYS: Record<VoiceSection, Record<string, VoiceSettingKind>> = {
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

/** Why `value` cannot be the setting `key` of this kind, or null when it can (null itself removes a setting). */
export function voiceSettingProblem(key: string, kind: VoiceSettingKind, value: unknown): string | null {
  if (value === null) return null;
  if (kind === 'bool') return typeof value === 'boolean' ? null : `${key} must be true or false`;
  if (kind === 'int')
    return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 192_000
      ? null
      : `${key} must be a whole number from 0 to 192000`;
  return typeof value === 'string' && value.trim() !== '' && value.length <= 128 && !/[\x00-\x1f]/.test(value)
    ? null
    : `${key} must be a non-empty string of at most 128 characters`;
}

/**
 * A PATCH body's changes. Every key it sent must be a setting of the section (`profile` is not one: it picks
 * where the change is written), else it is refused by name; `values` hold the settings' values, each
 * already found right by voiceSettingProblem where the body came in. Strings are trimmed. At least one.
 */
export function voiceSettingsChanges(
  section: VoiceSection,
  sent: readonly string[],
  values: Readonly<Record<string, unknown>>,
): Record<string, VoiceSettingValue> {
  const allowed = VOICE_SETTING_KEYS[section];
  const out: Record<string, VoiceSettingValue> = {};
  for (const key of sent) {
    if (key === 'profile') continue;
    if (!allowed[key])
      throw new DomainError(
        'validation_failed',
        'invalid',
        `unknown ${section} setting "${key.slice(0, 64)}"; known: ${Object.keys(allowed).join(', ')}`,
      );
    const value = values[key] as VoiceSettingValue;
    out[key] = typeof value === 'string' ? value.trim() : value;
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
 * A voice session is created, unless `actor` already holds `maxOpen` open ones (created and not ended: a
 * socket attached, or still within its connect window): 429, with the voice routes' `success: false`.
 */
export function openVoiceSession(
  models: ReadModels,
  actor: string,
  maxOpen: number,
  session: VoiceSessionCreated['data'],
): NewEvent<VoiceSessionCreated>[] {
  let open = 0;
  for (const s of models.voice.openSessions()) if (s.actor === actor) open++;
  if (open >= maxOpen)
    throw new DomainError(
      'rate_limited',
      'rate_limited',
      `this caller already has ${open} open voice sessions (at most ${maxOpen}, RELAY_VOICE_MAX_OPEN_SESSIONS); close one first`,
      { success: false, retry_after: 5, max_open: maxOpen },
    );
  return [{ type: 'voice.session_created', data: session }];
}

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
