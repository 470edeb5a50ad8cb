import type { VoiceSection } from '@svc/events';
import type { PcmStream } from './pcm-stream';
import type { SpeechLanguage } from './speech-language';

/** `language`: the provider's own name for it (speechLanguage), or null (the voice decides). */
export type SynthesisRequest = { text: string; voice: string | null; model: string | null; speed: number | null; language: string | null };
export type Synthesis = { audio: Buffer; contentType: 'audio/mpeg' | 'audio/wav' };
export type TranscriptionRequest = {
  audio: Buffer;
  contentType: string;
  fileName: string;
  language: string | null;
  model: string | null;
  /** Aborts when the caller goes away: the provider stops its work (kills its programs). */
  signal?: AbortSignal;
};
export type Transcription = { text: string; audioMs: number | null };

export type ProviderOptions = {
  provider: string;
  label: string;
  models: string[];
  voices: Array<{ id: string; label: string }>;
  languages: string[];
  sample_rates: number[];
  /** `static`: the provider's built-in list; `discovered`: asked of the provider (cached). */
  source: 'static' | 'discovered';
};

/** What this relay does with a provider, as the app's settings screens read it (`supports_*`, voice-catalog.ts). */
export type ProviderCapabilities = {
  supports_tts: boolean;
  supports_stt: boolean;
  supports_speech_to_speech: boolean;
  supports_tool_use: boolean;
  supports_realtime: boolean;
  supports_realtime_agent_native: boolean;
  supports_interruption: boolean;
  supports_expression: boolean;
};

/** The model, voice and sample rate a provider uses where neither the relay nor a profile names one. */
export type ProviderDefaults = { model: string; voice: string; sample_rate: number };

/**
 * The voice providers' port. A provider turns text into audio and audio into text, and answers what is
 * particular to it (its names, defaults, options, whether it has a realtime API); the relay's routes,
 * sessions, auth, caps and events do not depend on which one answers.
 */
export interface VoiceProvider {
  readonly id: string;
  readonly label: string;
  /** Every name a config may give it (`openai_tts`, `espeak-ng`, ...), in lower case, its id among them. */
  readonly aliases: readonly string[];
  /**
   * It has a realtime speech API: a realtime session's mic audio and responses go through it
   * (realtime-upstream.ts), and the realtime agent runs on it natively (native-agent.ts).
   */
  readonly realtime: boolean;
  /** Its option lists are asked of it when it can answer (cached), not only built in. */
  readonly discoversOptions: boolean;
  readonly capabilities: ProviderCapabilities;
  /** The app decodes a section's model, voice and sample rate as non-null: these fill them. */
  defaults(section: VoiceSection): ProviderDefaults;
  /** Why it cannot answer now (a missing key, a missing program), or null when it can. */
  unavailable(): string | null;
  /** Why it cannot transcribe now (the offline provider needs other programs for that), or null. */
  sttUnavailable(): string | null;
  /** The refusal a caller gets while it is unavailable (`voice.no_api_key`: spec 7's 500), or null. */
  unavailableError(): VoiceProviderError | null;
  /** Whether it takes a voice its option list does not name (espeak-ng takes any voice name). */
  takesVoice(voice: string): boolean;
  synthesize(req: SynthesisRequest): Promise<Synthesis>;
  /** Speech as it is produced, for the streaming sessions (the model is the caller's, or the provider's default; the language as speechLanguage named it). */
  speak(text: string, voice: string | null, model: string | null, language: string | null): Promise<PcmStream>;
  /** Its own name for a language the app sent (`de-DE`, `pt_BR`, `German`), or why it speaks none such. */
  speechLanguage(raw: string): Promise<SpeechLanguage>;
  transcribe(req: TranscriptionRequest): Promise<Transcription>;
  /** Its option lists for a section's settings. */
  options(section: VoiceSection): Promise<ProviderOptions>;
}

/** A provider failed for a reason worth telling the caller (no key: 500 per spec 7; bad audio: 415/400). */
export class VoiceProviderError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: 'unavailable' | 'unsupported' | 'invalid' | 'upstream' | 'timeout' = 'upstream',
  ) {
    super(message);
  }
}
