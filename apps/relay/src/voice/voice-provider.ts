/**
 * The voice providers' port. A provider turns text into audio and audio into text; the relay's routes,
 * auth, caps and events do not depend on which one answers.
 */
export type SynthesisRequest = { text: string; voice: string | null; model: string | null; speed: number | null };
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

export interface VoiceProvider {
  readonly id: string;
  readonly label: string;
  /** Why it cannot answer now (a missing key, a missing program), or null when it can. */
  unavailable(): string | null;
  synthesize(req: SynthesisRequest): Promise<Synthesis>;
  transcribe(req: TranscriptionRequest): Promise<Transcription>;
  options(): Promise<ProviderOptions>;
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
