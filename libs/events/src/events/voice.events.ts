import type { Ev } from '../event';

/**
 * Relay voice (spec 4.5) and the runtime security toggle (4.10). Never audio, transcript or synthesized
 * text, never a key: what was done, by which provider, how big and how long, and how it ended.
 */

/** The voice settings sections the relay writes (PATCH `/voice/output/config`, `/voice/realtime/config`, ...). */
export type VoiceSection = 'voice_output' | 'realtime_voice' | 'realtime_agent';
/** A setting's value: the relay only stores flat scalars (provider, model, voice, sample_rate, ...). */
export type VoiceSettingValue = string | number | boolean | null;

/**
 * A PATCH changed voice settings. `scope: relay` changes the relay-owned defaults (this event is their
 * record and the projection their state); `scope: profile` rewrote that profile's config file, whose
 * new digest is recorded (the file is the state).
 */
export type VoiceSettingsChanged = Ev<
  'voice.settings_changed',
  {
    section: VoiceSection;
    scope: 'relay' | 'profile';
    profile: string | null;
    changed: Record<string, VoiceSettingValue>;
    /** Profile scope: the config file written and the SHA-256 of its new content. */
    file?: { path: string; sha256: string };
  }
>;

/** How a voice call came in: a paired phone's session grant, or the API bearer (API voice, spec 5). */
export type VoiceVia = 'session' | 'api';
export type VoiceOutcome = 'ok' | 'failed';

export type VoiceTranscribed = Ev<
  'voice.transcribed',
  {
    provider: string;
    profile: string | null;
    via: VoiceVia;
    outcome: VoiceOutcome;
    /** Upload size and audio length (null when the audio could not be decoded). */
    bytes: number;
    audioMs: number | null;
    durationMs: number;
    /** Characters of transcript produced (not the text). */
    chars: number;
    error?: string;
  }
>;

export type VoiceSynthesized = Ev<
  'voice.synthesized',
  {
    provider: string;
    profile: string | null;
    via: VoiceVia;
    outcome: VoiceOutcome;
    /** Characters of input text (not the text), bytes of audio produced. */
    chars: number;
    bytes: number;
    durationMs: number;
    error?: string;
  }
>;

export type VoiceSessionKind = 'output' | 'realtime' | 'realtime_agent';

/** A short-lived voice session (its socket must be opened before `expiresAt`). Ephemeral: reset at `relay.started`. */
export type VoiceSessionCreated = Ev<
  'voice.session_created',
  {
    sessionId: string;
    kind: VoiceSessionKind;
    profile: string | null;
    provider: string;
    via: VoiceVia;
    expiresAt: string;
    /** The realtime agent's chat session (`chat_session_id`), when the caller bound one. */
    chatSessionId?: string;
  }
>;
/**
 * A voice session's socket dropped (not a normal close) and the session is held for a resume until
 * `resumeUntil`: its work goes on into a bounded replay buffer. `code` is the WebSocket close code seen.
 */
export type VoiceSessionDetached = Ev<'voice.session_detached', { sessionId: string; kind: VoiceSessionKind; code: number; resumeUntil: string }>;
/**
 * A new socket of the same caller presented the session's resume token and took the session over;
 * `fromEventId` is the client's last event, `replayed` how many held frames it was sent again.
 */
export type VoiceSessionResumed = Ev<'voice.session_resumed', { sessionId: string; kind: VoiceSessionKind; fromEventId: number; replayed: number }>;
export type VoiceSessionEnded = Ev<
  'voice.session_ended',
  { sessionId: string; kind: VoiceSessionKind; reason: string; chunks: number; bytes: number; chars: number }
>;

/**
 * The runtime escape hatch for plain-HTTP API-bearer voice auth from non-loopback peers, turned on or off
 * by the operator (`PATCH /relay/security`, `svc relay insecure-api-key on|off`). Lasts until restart:
 * `relay.started` carries the value the process started with.
 */
export type RelaySecurityChanged = Ev<'relay.security_changed', { allowInsecureApiBearer: boolean; previous: boolean }>;

export type VoiceEvent =
  | VoiceSettingsChanged
  | VoiceTranscribed
  | VoiceSynthesized
  | VoiceSessionCreated
  | VoiceSessionDetached
  | VoiceSessionResumed
  | VoiceSessionEnded
  | RelaySecurityChanged;
