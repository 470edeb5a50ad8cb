/**
 * The Voice page (`/console/api/voice`): providers and what each section uses, sessions, recent calls,
 * provider usage and the switches. Types only; times are epoch seconds. Never text, audio or a key.
 */

export type VoiceSectionId = 'voice_output' | 'realtime_voice' | 'realtime_agent';

/** A speech provider of this relay: whether it can serve now, and why not (a missing key or program). */
export type VoiceProviderRow = {
  provider: string;
  label: string;
  available: boolean;
  unavailable_reason: string | null;
  /** Speech to text needs more than speech does on some providers (the offline one needs pocketsphinx). */
  stt_unavailable_reason: string | null;
  /** It has a realtime speech API (the realtime agent runs on it natively). */
  realtime: boolean;
  /** The sections (and one-shot calls) that use it when nothing else is named. */
  default_for: Array<VoiceSectionId | 'synthesize' | 'transcribe'>;
};

/** One streaming section as phones get it in its default scope (no profile). */
export type VoiceSectionRow = {
  section: VoiceSectionId;
  title: string;
  /** In effect: the relay-wide `enabled`, or RELAY_REALTIME_VOICE_ENABLED for the realtime ones. */
  enabled: boolean;
  /** RELAY_REALTIME_VOICE_ENABLED=1 keeps it on whatever the switch says. */
  forced_by_env: boolean;
  /** The provider the section names (resolved to an id when this relay has it). */
  provider: string;
  provider_known: boolean;
  available: boolean;
  unavailable_reason: string | null;
  model: string;
  voice: string;
  sample_rate: number | null;
};

/** `/voice/synthesize` and `/voice/transcribe` in the global config (`tts:` / `stt:`). */
export type VoiceCallDefault = { provider: string; available: boolean; unavailable_reason: string | null };

/** A voice session not ended yet. `state`: waiting for its socket, streaming, or held for a resume after a drop. */
export type VoiceSessionOpenRow = {
  session_id: string;
  kind: 'output' | 'realtime' | 'realtime_agent';
  state: 'waiting' | 'connected' | 'held';
  profile: string | null;
  provider: string;
  via: 'session' | 'api';
  actor: string;
  created_at: number;
  /** The connect window's end, or while held the end of the resume grace. */
  expires_at: number;
  /** While held: the bytes of frames it holds for the resume (null otherwise). */
  held_bytes: number | null;
  drops: number;
  resumes: number;
};

/**
 * The sessions held for a resume, together: how many, what they hold against RELAY_VOICE_HELD_MAX_BYTES, and
 * how long one is held (RELAY_VOICE_RESUME_GRACE_SECONDS).
 */
export type VoiceHeld = { sessions: number; bytes: number; max_bytes: number; grace_seconds: number };

export type VoiceSessionEndedRow = {
  session_id: string;
  kind: 'output' | 'realtime' | 'realtime_agent';
  profile: string | null;
  provider: string;
  via: 'session' | 'api';
  actor: string;
  created_at: number;
  ended_at: number;
  duration_seconds: number;
  reason: string;
  chunks: number;
  bytes: number;
  chars: number;
  drops: number;
  resumes: number;
};

/** One call, with its latency; never its text or audio. */
export type VoiceCallRow = {
  seq: number;
  at: number;
  kind: 'transcribe' | 'synthesize';
  provider: string;
  profile: string | null;
  via: 'session' | 'api';
  actor: string;
  outcome: 'ok' | 'failed';
  latency_ms: number;
  bytes: number;
  chars: number;
  audio_seconds: number | null;
  error: string | null;
};

export type VoiceUsageRow = {
  provider: string;
  profile: string;
  transcriptions: number;
  syntheses: number;
  sessions: number;
  failures: number;
  characters: number;
  audio_bytes: number;
  audio_seconds: number;
  last_used_at: number;
};

export type VoiceSecurityState = {
  /** The runtime escape hatch: API-bearer voice over plain HTTP from other machines (until restart). */
  allow_insecure_api_bearer: boolean;
  api_key_configured: boolean;
  tls: boolean;
  trust_proxy_headers: boolean;
};

export type VoiceView = {
  ok: true;
  server_time: number;
  providers: VoiceProviderRow[];
  sections: VoiceSectionRow[];
  calls_default: { synthesize: VoiceCallDefault; transcribe: VoiceCallDefault };
  open_sessions: VoiceSessionOpenRow[];
  held: VoiceHeld;
  ended_sessions: VoiceSessionEndedRow[];
  calls: VoiceCallRow[];
  totals: { transcriptions: number; syntheses: number; failures: number; last_at: number | null };
  usage: { since: number | null; rows: VoiceUsageRow[]; phones_may_read: boolean };
  security: VoiceSecurityState;
};

/** `POST /console/api/voice/sections/<section>` `{enabled}`: the relay-wide switch, as PATCH /voice/.../config from loopback. */
export type VoiceSwitchAnswer = { ok: true; section: VoiceSectionId; enabled: boolean; changed: boolean };

/** `POST /console/api/voice/security` `{allow_insecure_api_bearer}`, as PATCH /relay/security. */
export type VoiceSecurityAnswer = { ok: true } & VoiceSecurityState;
