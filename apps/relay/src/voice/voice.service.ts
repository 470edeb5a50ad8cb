import { Inject, Injectable } from '@nestjs/common';
import { actorOf, DomainError, MAX_TTS_CHARS, type Principal } from '@svc/domain';
import type { VoiceVia } from '@svc/events';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { sanitizeForSpeech } from './speech-text';
import { profileNamed, VoiceConfigFiles } from './voice-config';
import type { SynthesizeDto } from './voice.dto';
import { VoiceProviders } from './voice-providers';
import { str } from './voice-yaml';

const viaOf = (p: Principal): VoiceVia => (p.kind === 'api' ? 'api' : 'session');

export type Upload = { audio: Buffer; contentType: string; fileName: string; signal?: AbortSignal };

/**
 * Relay voice (spec 4.5) in one request: the profile/global config as it resolves, text to MP3 and audio
 * to text by the provider configured, within the caps, and a record of what happened (never audio, text
 * or keys).
 */
@Injectable()
export class VoiceService {
  constructor(
    private readonly loop: CommandLoop,
    private readonly providers: VoiceProviders,
    private readonly files: VoiceConfigFiles,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  get maxAudioBytes(): number {
    return this.config.voice.maxAudioBytes;
  }

  /** The providers this relay has, and why each cannot serve now (the operator's usage page). */
  providerStates(): Array<{ provider: string; unavailable: string | null }> {
    return this.providers.states();
  }

  /** GET /voice/config. */
  config_(profileRaw: string | undefined) {
    const profile = profileNamed(profileRaw);
    const scope = this.files.resolve(profile);
    const tts = this.providers.section(scope, 'tts');
    const stt = this.providers.section(scope, 'stt');
    const hasSection = scope.data.tts !== undefined || scope.data.stt !== undefined;
    const configScope = profile !== null && scope.scope === 'profile' && !hasSection ? 'global' : scope.scope;
    const fallback = configScope === 'global' && profile !== null;
    const ttsWhy = tts.providerId
      ? this.providers.get(tts.providerId).unavailable()
      : `tts provider "${tts.configured}" is not available in this relay`;
    const sttWhy = stt.providerId
      ? this.providers.get(stt.providerId).sttUnavailable()
      : `stt provider "${stt.configured}" is not available in this relay`;
    return {
      ok: true,
      success: true,
      profile,
      config_scope: configScope,
      fallback_to_global: fallback,
      tts: {
        provider: tts.providerId ?? tts.configured,
        voice: str(tts.cfg.voice) ?? str(tts.cfg.voice_id),
        voice_id: str(tts.cfg.voice_id) ?? str(tts.cfg.voice),
        model: str(tts.cfg.model),
        enabled: ttsWhy === null,
        enhanced: null,
      },
      stt: { provider: stt.providerId ?? stt.configured, model: str(stt.cfg.model), enabled: sttWhy === null },
      requirements: {
        tts_available: ttsWhy === null,
        stt_available: sttWhy === null,
        ...(ttsWhy ? { tts_reason: ttsWhy } : {}),
        ...(sttWhy ? { stt_reason: sttWhy } : {}),
        max_text_chars: MAX_TTS_CHARS,
        max_audio_bytes: this.config.voice.maxAudioBytes,
      },
    };
  }

  /** POST /voice/synthesize: MP3 bytes for at most 5,000 characters (the text trimmed and found non-empty where it came in). */
  async synthesize(b: SynthesizeDto, principal: Principal): Promise<{ audio: Buffer; provider: string }> {
    // The bound before any work on the text: the sanitizer is linear, but a megabyte of it is still work.
    if (b.text.length > MAX_TTS_CHARS)
      throw new DomainError('voice.text_too_long', 'invalid', `text exceeds ${MAX_TTS_CHARS} characters (${b.text.length})`, {
        success: false,
        max_chars: MAX_TTS_CHARS,
      });
    const text = sanitizeForSpeech(b.text);
    if (text === '') throw new DomainError('validation_failed', 'invalid', "'text' is empty after removing markup", { success: false });
    const profile = profileNamed(b.profile);
    const scope = this.files.resolve(profile);
    const tts = this.providers.section(scope, 'tts');
    const forced = b.provider === undefined ? null : this.providers.idOf(b.provider);
    if (b.provider !== undefined && forced === null)
      throw new DomainError('voice.unknown_provider', 'invalid', `no voice provider "${String(b.provider).slice(0, 40)}"`, { success: false });
    const id = forced ?? tts.providerId;
    if (id === null)
      throw new DomainError(
        'voice.provider_unavailable',
        'unavailable',
        `tts provider "${tts.configured}" is not available in this relay (it has: ${this.providers.ids().join(', ')})`,
        { success: false },
      );
    const provider = this.providers.get(id);
    const language = await this.providers.language(provider, str(b.language));
    const started = performance.now();
    const record = (outcome: 'ok' | 'failed', bytes: number, error?: string) =>
      this.loop.run(actorOf(principal), () => [
        {
          type: 'voice.synthesized' as const,
          data: {
            provider: id,
            profile,
            via: viaOf(principal),
            outcome,
            chars: text.length,
            bytes,
            durationMs: Math.round(performance.now() - started),
            ...(error ? { error } : {}),
          },
        },
      ]);
    try {
      const out = await provider.synthesize({
        text,
        voice: str(b.voice) ?? str(tts.cfg.voice) ?? str(tts.cfg.voice_id),
        model: str(b.model) ?? str(tts.cfg.model),
        speed: b.speed ?? null,
        language,
      });
      await record('ok', out.audio.length);
      return { audio: out.audio, provider: id };
    } catch (err) {
      const mapped = this.providers.failure(err);
      await record('failed', 0, mapped.code);
      throw mapped;
    }
  }

  /** POST /voice/transcribe, after the upload was read under the cap. */
  async transcribe(upload: Upload, profile: string | null, language: string | undefined, principal: Principal) {
    if (upload.audio.length === 0) throw new DomainError('voice.empty_audio', 'invalid', 'empty audio upload', { success: false });
    if (upload.contentType && !/^(audio\/|video\/(mp4|webm|ogg)|application\/octet-stream)/i.test(upload.contentType))
      throw new DomainError('voice.unsupported_audio', 'unsupported', `the upload is ${upload.contentType.slice(0, 60)}, not audio`, {
        success: false,
      });
    const scope = this.files.resolve(profile);
    const stt = this.providers.section(scope, 'stt');
    if (stt.providerId === null)
      throw new DomainError(
        'voice.provider_unavailable',
        'unavailable',
        `stt provider "${stt.configured}" is not available in this relay (it has: ${this.providers.ids().join(', ')})`,
        { success: false },
      );
    const id = stt.providerId;
    const started = performance.now();
    const record = (outcome: 'ok' | 'failed', chars: number, audioMs: number | null, error?: string) =>
      this.loop.run(actorOf(principal), () => [
        {
          type: 'voice.transcribed' as const,
          data: {
            provider: id,
            profile,
            via: viaOf(principal),
            outcome,
            bytes: upload.audio.length,
            audioMs,
            durationMs: Math.round(performance.now() - started),
            chars,
            ...(error ? { error } : {}),
          },
        },
      ]);
    try {
      const r = await this.providers.get(id).transcribe({ ...upload, language: str(language) ?? str(stt.cfg.language), model: str(stt.cfg.model) });
      await record('ok', r.text.length, r.audioMs);
      return { ok: true, success: true, text: r.text, provider: id, profile };
    } catch (err) {
      const mapped = this.providers.failure(err);
      await record('failed', 0, null, mapped.code);
      throw mapped;
    }
  }
}
