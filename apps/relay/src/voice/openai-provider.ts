import type { VoiceSection } from '@svc/events';
import { randomBytes } from 'node:crypto';
import type { VoiceConfig } from '../common/config/relay-config';
import type { PcmStream } from './pcm-stream';
import { languageTag, type SpeechLanguage } from './speech-language';
import { errorBodyText } from './upstream-error';
import {
  VoiceProviderError,
  type ProviderCapabilities,
  type ProviderDefaults,
  type ProviderOptions,
  type Synthesis,
  type SynthesisRequest,
  type Transcription,
  type TranscriptionRequest,
  type VoiceProvider,
} from './voice-provider';

const STATIC: Omit<ProviderOptions, 'source'> = {
  provider: 'openai',
  label: 'OpenAI-compatible API',
  models: [
    'gpt-4o-mini-tts',
    'tts-1',
    'tts-1-hd',
    'whisper-1',
    'gpt-4o-transcribe',
    'gpt-4o-mini-transcribe',
    'gpt-4o-realtime-preview',
    'gpt-4o-mini-realtime-preview',
    'gpt-realtime',
  ],
  voices: ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'].map((id) => ({ id, label: id })),
  // The languages OpenAI's speech models speak: Whisper's (its text to speech guide's "Supported languages").
  languages: (
    'af ar az be bg bs ca cs cy da de el en es et fa fi fr gl he hi hr hu hy id is it ja kk kn ko lt lv mi mk mr ms ne nl no pl pt ro ' +
    'ru sk sl sr sv sw ta th tl tr uk ur vi zh'
  ).split(' '),
  sample_rates: [24000],
};
const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language', languageDisplay: 'standard' });

/**
 * What the speech request says of the language: the API has no language parameter (the voice reads the text as
 * written), but the gpt-4o speech models take `instructions`; tts-1 and tts-1-hd take none.
 */
function languageInstructions(model: string, language: string | null): { instructions?: string } {
  if (language === null || !model.startsWith('gpt-')) return {};
  return { instructions: `Speak in ${LANGUAGE_NAMES.of(language) ?? language}.` };
}
const DISCOVERY_TTL_MS = 10 * 60_000;
/** The models of a realtime section when discovery found none of them. */
const REALTIME_MODELS = ['gpt-4o-realtime-preview', 'gpt-4o-mini-realtime-preview', 'gpt-realtime'];
const isRealtimeModel = (m: string) => /realtime/i.test(m);

/**
 * An OpenAI-compatible HTTP provider: `POST {base}/audio/speech` (MP3) and `POST {base}/audio/transcriptions`
 * (multipart). The key comes from the environment (or the service's .env) and is only ever sent to the
 * configured base URL. Option discovery asks `GET {base}/models` and keeps the answer for 10 minutes,
 * falling back to a static list.
 */
export class OpenAiVoiceProvider implements VoiceProvider {
  readonly id = 'openai';
  readonly label = STATIC.label;
  readonly aliases = ['openai', 'openai_tts', 'openai_stt', 'whisper'];
  readonly realtime = true;
  readonly discoversOptions = true;
  // The provider's realtime socket hears the mic and speaks; the realtime agent declares the narrow tool surface.
  readonly capabilities: ProviderCapabilities = {
    supports_tts: true,
    supports_stt: true,
    supports_speech_to_speech: true,
    supports_tool_use: true,
    supports_realtime: true,
    supports_realtime_agent_native: true,
    supports_interruption: true,
    supports_expression: false,
  };
  private discovered: { at: number; options: ProviderOptions } | null = null;

  constructor(
    private readonly cfg: VoiceConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /** The speech models for voice output, the realtime models for the realtime sections (their sessions run one). */
  defaults(section: VoiceSection): ProviderDefaults {
    return { model: section === 'voice_output' ? 'gpt-4o-mini-tts' : 'gpt-4o-realtime-preview', voice: 'alloy', sample_rate: 24000 };
  }

  unavailable(): string | null {
    return this.cfg.openaiKey
      ? null
      : 'no API key is available for the openai provider (set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY, or put it in the service .env)';
  }

  sttUnavailable(): string | null {
    return this.unavailable();
  }

  unavailableError(): VoiceProviderError | null {
    const why = this.unavailable();
    return why ? new VoiceProviderError('voice.no_api_key', why, 'unavailable') : null;
  }

  /** Only the voices it lists. */
  takesVoice(): boolean {
    return false;
  }

  private async call(pathName: string, init: RequestInit, timeoutMs = this.cfg.timeoutMs): Promise<Response> {
    const refused = this.unavailableError();
    if (refused) throw refused;
    const res = await fetch(`${this.cfg.openaiBaseUrl}${pathName}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${this.cfg.openaiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    }).catch((e: Error) => {
      if (e.name === 'TimeoutError')
        throw new VoiceProviderError(
          'voice.provider_timeout',
          `the openai provider did not answer within ${Math.round(timeoutMs / 1000)} s`,
          'timeout',
        );
      throw new VoiceProviderError('voice.provider_unreachable', `the openai provider could not be reached: ${e.message}`);
    });
    if (!res.ok) {
      const detail = errorBodyText((await res.text().catch(() => '')).slice(0, 4096));
      throw new VoiceProviderError('voice.provider_error', `the openai provider answered ${res.status}${detail ? `: ${detail.slice(0, 200)}` : ''}`);
    }
    return res;
  }

  async synthesize(req: SynthesisRequest): Promise<Synthesis> {
    const model = req.model ?? 'gpt-4o-mini-tts';
    const res = await this.call('/audio/speech', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        voice: req.voice ?? 'alloy',
        input: req.text,
        response_format: 'mp3',
        ...(req.speed ? { speed: req.speed } : {}),
        ...languageInstructions(model, req.language),
      }),
    });
    return { audio: Buffer.from(await res.arrayBuffer()), contentType: 'audio/mpeg' };
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    // The multipart body is built as one buffer: FormData with a Blob streams it through web streams,
    // which cost about a millisecond per 100 KB here (bench/voice.js).
    const boundary = `----svc-voice-${randomBytes(12).toString('hex')}`;
    const clean = (v: string) => v.replace(/["\r\n\\]/g, '_').slice(0, 200);
    const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${clean(value)}\r\n`;
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${clean(req.fileName || 'audio')}"\r\nContent-Type: ${clean(req.contentType || 'application/octet-stream')}\r\n\r\n`,
      ),
      req.audio,
      Buffer.from(`\r\n${field('model', req.model ?? 'whisper-1')}${req.language ? field('language', req.language) : ''}--${boundary}--\r\n`),
    ]);
    const res = await this.call('/audio/transcriptions', {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    const j = (await res.json().catch(() => null)) as { text?: unknown } | null;
    if (!j || typeof j.text !== 'string') throw new VoiceProviderError('voice.provider_error', 'the openai provider answered without a transcript');
    return { text: j.text, audioMs: null };
  }

  /** A language its models speak (`pt-BR` by Portuguese), named as the app sent it (lower-cased). */
  async speechLanguage(raw: string): Promise<SpeechLanguage> {
    const tag = languageTag(raw);
    if (tag !== null && STATIC.languages.includes(tag.split('-')[0])) return { ok: true, language: tag };
    return {
      ok: false,
      why: `the openai provider speaks no language "${raw.trim().slice(0, 40)}"; it speaks ${STATIC.languages.join(', ')} (a region may follow: pt-BR)`,
    };
  }

  /** `/audio/speech` with `response_format: pcm` (24 kHz 16-bit mono), read as it streams. */
  async speak(text: string, voice: string | null, model: string | null, language: string | null): Promise<PcmStream> {
    const cfg = this.cfg;
    if (!cfg.openaiKey)
      throw new VoiceProviderError(
        'voice.no_api_key',
        'no API key is available for the openai provider (set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY)',
        'unavailable',
      );
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), cfg.timeoutMs);
    const res = await fetch(`${cfg.openaiBaseUrl}/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${cfg.openaiKey}` },
      body: JSON.stringify({
        model: model ?? 'gpt-4o-mini-tts',
        voice: voice ?? 'alloy',
        input: text,
        response_format: 'pcm',
        ...languageInstructions(model ?? 'gpt-4o-mini-tts', language),
      }),
      signal: abort.signal,
    }).catch((e: Error) => {
      clearTimeout(timer);
      throw new VoiceProviderError('voice.provider_unreachable', `the openai provider could not be reached: ${e.message}`);
    });
    if (!res.ok || !res.body) {
      clearTimeout(timer);
      const detail = res.ok ? '' : errorBodyText((await res.text().catch(() => '')).slice(0, 4096));
      throw new VoiceProviderError('voice.provider_error', `the openai provider answered ${res.status}${detail ? `: ${detail.slice(0, 200)}` : ''}`);
    }
    const body = res.body;
    async function* chunks(): AsyncIterable<Buffer> {
      try {
        for await (const c of body as unknown as AsyncIterable<Uint8Array>) yield Buffer.from(c);
      } finally {
        clearTimeout(timer);
      }
    }
    return { sampleRate: 24000, chunks: chunks(), stop: () => abort.abort() };
  }

  /**
   * The section's options: its speech models for voice output, its realtime models for the realtime
   * sections (the session's model is a realtime one there).
   */
  async options(section: VoiceSection): Promise<ProviderOptions> {
    const o = await this.allOptions();
    const realtime = section !== 'voice_output';
    const models = o.models.filter((m) => isRealtimeModel(m) === realtime);
    return { ...o, models: models.length > 0 ? models : realtime ? REALTIME_MODELS : o.models.filter((m) => !isRealtimeModel(m)) };
  }

  private async allOptions(): Promise<ProviderOptions> {
    if (this.discovered && this.now() - this.discovered.at < DISCOVERY_TTL_MS) return this.discovered.options;
    if (this.unavailable()) return { ...STATIC, source: 'static' };
    try {
      // Discovery must not hold up a settings page: 3 s, then the static list.
      const res = await this.call('/models', { method: 'GET' }, Math.min(3000, this.cfg.timeoutMs));
      const body = await res.text();
      const j = JSON.parse(body) as { data?: Array<{ id?: unknown }> };
      const ids = (j.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
      const audio = ids.filter((id) => /tts|whisper|transcribe|audio|realtime/i.test(id)).sort();
      const options: ProviderOptions = { ...STATIC, models: audio.length > 0 ? audio : STATIC.models, source: 'discovered' };
      this.discovered = { at: this.now(), options };
      return options;
    } catch {
      // A provider that cannot list its models is not asked again for a minute (the static list answers).
      const options: ProviderOptions = { ...STATIC, source: 'static' };
      this.discovered = { at: this.now() - DISCOVERY_TTL_MS + 60_000, options };
      return options;
    }
  }
}
