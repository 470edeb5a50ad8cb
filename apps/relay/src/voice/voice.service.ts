import { Inject, Injectable } from '@nestjs/common';
import {
  actorOf,
  changeRelayVoiceSettings,
  DomainError,
  MAX_TTS_CHARS,
  parseVoiceSettingsPatch,
  recordProfileVoiceSettings,
  setInsecureApiBearer,
  type Principal,
} from '@svc/domain';
import type { VoiceSection, VoiceSettingValue, VoiceVia } from '@svc/events';
import type { Logger } from 'pino';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { LOGGER, RELAY_CONFIG } from '../common/tokens';
import { OfflineVoiceProvider } from './offline-provider';
import { OpenAiVoiceProvider } from './openai-provider';
import {
  bool,
  ConfigFileError,
  int,
  ProfileNameError,
  selectedProviderConfig,
  str,
  VoiceConfigFiles,
  type VoiceScope,
  type YamlMap,
} from './voice-config';
import { sanitizeForSpeech } from './speech-text';
import { providerInfo, sectionOptions, type ProviderInfo } from './voice-catalog';
import { VoiceProviderError, type VoiceProvider } from './voice-provider';
import { VoiceWire } from './voice-wire';

/** Provider names as configs spell them, to the providers this relay has. */
const PROVIDER_ALIASES: Record<string, string> = {
  offline: 'offline',
  local: 'offline',
  espeak: 'offline',
  'espeak-ng': 'offline',
  espeak_ng: 'offline',
  pocketsphinx: 'offline',
  openai: 'openai',
  openai_tts: 'openai',
  openai_stt: 'openai',
  whisper: 'openai',
};

const viaOf = (p: Principal): VoiceVia => (p.kind === 'api' ? 'api' : 'session');

/** Settings that switch a feature on or off for every phone: in the default scope, only the operator flips them. */
const RELAY_SWITCHES = ['enabled'] as const;

/**
 * Relay voice (spec 4.5): resolves the profile/global config, picks the provider, runs it within the
 * caps, and records what happened (never audio, text or keys).
 */
@Injectable()
export class VoiceService {
  readonly files: VoiceConfigFiles;
  readonly offline: OfflineVoiceProvider;
  readonly providers: Map<string, VoiceProvider>;
  /** Brand-named things written in the relay's spelling (RELAY_CLIENT_SPELLING). */
  readonly wire: VoiceWire;

  constructor(
    private readonly log: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.files = new VoiceConfigFiles(config.svcConfigPath, config.svcHome);
    this.wire = new VoiceWire(config.clientSpelling);
    this.offline = new OfflineVoiceProvider(config.voice, logger);
    this.providers = new Map<string, VoiceProvider>([
      ['offline', this.offline],
      ['openai', new OpenAiVoiceProvider(config.voice, () => this.clock.now().getTime())],
    ]);
  }

  get maxAudioBytes(): number {
    return this.config.voice.maxAudioBytes;
  }

  /** `?profile=` (or a body's `profile`), checked: a name that could not be a profile is a 400. */
  profileOf(raw: unknown): string | null {
    try {
      return VoiceConfigFiles.checkProfile(raw);
    } catch (err) {
      if (err instanceof ProfileNameError) throw new DomainError('validation_failed', 'invalid', err.message, { success: false });
      throw err;
    }
  }

  /** The default when a config names none: the cloud provider when its key is set, else the offline one (works with no network). */
  defaultProvider(): string {
    return this.config.voice.openaiKey ? 'openai' : 'offline';
  }

  /** A configured provider name to one of ours (null: this relay does not have it). */
  providerId(configured: unknown): string | null {
    const name = str(configured);
    if (name === null) return this.defaultProvider();
    return PROVIDER_ALIASES[name.toLowerCase()] ?? null;
  }

  /** The providers this relay has, and why each cannot serve now (null when it can). Never a key. */
  providerStates(): Array<{ provider: string; unavailable: string | null }> {
    return [...this.providers].map(([provider, p]) => ({ provider, unavailable: p.unavailable() }));
  }

  provider(id: string): VoiceProvider {
    const p = this.providers.get(id);
    if (!p)
      throw new DomainError(
        'voice.unknown_provider',
        'not_found',
        `no voice provider "${id.slice(0, 40)}"; this relay has: ${[...this.providers.keys()].join(', ')}`,
        { success: false },
      );
    return p;
  }

  /** The tts or stt section for a scope, its provider resolved (or an explanation of why none). */
  section(scope: VoiceScope, name: 'tts' | 'stt'): { cfg: YamlMap; configured: string | null; providerId: string | null } {
    const cfg = selectedProviderConfig(scope.data, name);
    return { cfg, configured: str(cfg.provider), providerId: this.providerId(cfg.provider) };
  }

  /** GET /voice/config. */
  config_(profileRaw: unknown) {
    const profile = this.profileOf(profileRaw);
    const scope = this.files.resolve(profile);
    const tts = this.section(scope, 'tts');
    const stt = this.section(scope, 'stt');
    const hasSection = scope.data.tts !== undefined || scope.data.stt !== undefined;
    const configScope = profile !== null && scope.scope === 'profile' && !hasSection ? 'global' : scope.scope;
    const fallback = configScope === 'global' && profile !== null;
    const ttsWhy = tts.providerId ? this.provider(tts.providerId).unavailable() : `tts provider "${tts.configured}" is not available in this relay`;
    const sttWhy = stt.providerId
      ? stt.providerId === 'offline'
        ? this.offline.sttUnavailable()
        : this.provider(stt.providerId).unavailable()
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

  /** POST /voice/synthesize: MP3 bytes for at most 5,000 characters. */
  async synthesize(body: unknown, principal: Principal): Promise<{ audio: Buffer; provider: string }> {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new DomainError('validation_failed', 'invalid', 'send a JSON object: {"text": "..."}', { success: false });
    const b = body as Record<string, unknown>;
    if (typeof b.text !== 'string') throw new DomainError('validation_failed', 'invalid', "'text' must be a string", { success: false });
    // The bound before any work on the text: the sanitizer is linear, but a megabyte of it is still work.
    const trimmed = b.text.trim();
    if (trimmed === '') throw new DomainError('validation_failed', 'invalid', "'text' must not be empty", { success: false });
    if (trimmed.length > MAX_TTS_CHARS)
      throw new DomainError('voice.text_too_long', 'invalid', `text exceeds ${MAX_TTS_CHARS} characters (${trimmed.length})`, {
        success: false,
        max_chars: MAX_TTS_CHARS,
      });
    const text = sanitizeForSpeech(trimmed);
    if (text === '') throw new DomainError('validation_failed', 'invalid', "'text' is empty after removing markup", { success: false });
    const profile = this.profileOf(b.profile);
    const scope = this.files.resolve(profile);
    const tts = this.section(scope, 'tts');
    const forced = b.provider === undefined ? null : this.providerId(b.provider);
    if (b.provider !== undefined && forced === null)
      throw new DomainError('voice.unknown_provider', 'invalid', `no voice provider "${String(b.provider).slice(0, 40)}"`, { success: false });
    const id = forced ?? tts.providerId;
    if (id === null)
      throw new DomainError(
        'voice.provider_unavailable',
        'unavailable',
        `tts provider "${tts.configured}" is not available in this relay (it has: offline, openai)`,
        { success: false },
      );
    const provider = this.provider(id);
    const started = performance.now();
    const record = (outcome: 'ok' | 'failed', bytes: number, error?: string) =>
      this.log.run(actorOf(principal), () => [
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
        speed: typeof b.speed === 'number' && Number.isFinite(b.speed) ? b.speed : null,
      });
      await record('ok', out.audio.length);
      return { audio: out.audio, provider: id };
    } catch (err) {
      const mapped = this.providerFailure(err);
      await record('failed', 0, mapped.code);
      throw mapped;
    }
  }

  /** POST /voice/transcribe, after the upload was read under the cap. */
  async transcribe(
    upload: { audio: Buffer; contentType: string; fileName: string; signal?: AbortSignal },
    profileRaw: unknown,
    language: unknown,
    principal: Principal,
  ) {
    const profile = this.profileOf(profileRaw);
    if (upload.audio.length === 0) throw new DomainError('voice.empty_audio', 'invalid', 'empty audio upload', { success: false });
    if (upload.contentType && !/^(audio\/|video\/(mp4|webm|ogg)|application\/octet-stream)/i.test(upload.contentType))
      throw new DomainError('voice.unsupported_audio', 'unsupported', `the upload is ${upload.contentType.slice(0, 60)}, not audio`, {
        success: false,
      });
    const scope = this.files.resolve(profile);
    const stt = this.section(scope, 'stt');
    if (stt.providerId === null)
      throw new DomainError(
        'voice.provider_unavailable',
        'unavailable',
        `stt provider "${stt.configured}" is not available in this relay (it has: offline, openai)`,
        { success: false },
      );
    const id = stt.providerId;
    const started = performance.now();
    const record = (outcome: 'ok' | 'failed', chars: number, audioMs: number | null, error?: string) =>
      this.log.run(actorOf(principal), () => [
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
      const r = await this.provider(id).transcribe({ ...upload, language: str(language) ?? str(stt.cfg.language), model: str(stt.cfg.model) });
      await record('ok', r.text.length, r.audioMs);
      return { ok: true, success: true, text: r.text, provider: id, profile };
    } catch (err) {
      const mapped = this.providerFailure(err);
      await record('failed', 0, null, mapped.code);
      throw mapped;
    }
  }

  /** A provider's failure as the caller sees it; a missing key is spec 7's 500 "no API key available". */
  private providerFailure(err: unknown): DomainError {
    if (err instanceof DomainError) return err;
    if (err instanceof VoiceProviderError) {
      const kind = err.code === 'voice.no_api_key' ? 'not_configured' : err.status === 'upstream' ? 'upstream' : err.status;
      return new DomainError(err.code, kind, err.message, { success: false });
    }
    if ((err as Error).name === 'TimeoutError')
      return new DomainError(
        'voice.provider_timeout',
        'timeout',
        `the voice provider did not finish within ${Math.round(this.config.voice.timeoutMs / 1000)} s`,
        { success: false },
      );
    this.logger.error({ err: (err as Error).message }, 'voice provider failed');
    return new DomainError('voice.provider_failed', 'upstream', `the voice provider failed: ${(err as Error).message.slice(0, 200)}`, {
      success: false,
    });
  }

  // ---- voice output / realtime settings ---------------------------------------------------------

  private static readonly DEFAULTS: Record<VoiceSection, Record<string, VoiceSettingValue>> = {
    voice_output: {
      enabled: true,
      language: 'en',
      codec: 'pcm',
      optimize_streaming_latency: 1,
      text_normalization: false,
      auto_speech_tags: false,
      fallback_enabled: true,
    },
    realtime_voice: { enabled: false },
    realtime_agent: { enabled: false, fallback_engine: 'voice_output' },
  };

  /** A provider's defaults where neither the relay nor the profile names them (the app decodes them as non-null). */
  defaultsFor(section: VoiceSection, provider: string | null): { model: string; voice: string; sample_rate: number } {
    if (provider === 'openai')
      return { model: section === 'voice_output' ? 'gpt-4o-mini-tts' : 'gpt-4o-realtime-preview', voice: 'alloy', sample_rate: 24000 };
    return { model: 'espeak-ng', voice: 'en-us', sample_rate: 22050 };
  }

  /**
   * GET /voice/{output,realtime,realtime-agent}/config: defaults, then relay-owned values, then the
   * profile's; the model, voice and sample rate the provider chosen would use when none is named.
   */
  settings(
    section: VoiceSection,
    profileRaw: unknown,
  ): Record<string, VoiceSettingValue> & {
    ok: true;
    success: true;
    provider: VoiceSettingValue;
    profile: string | null;
    config_scope: 'relay' | 'profile' | 'global';
    fallback_to_global: boolean;
  } {
    const profile = this.profileOf(profileRaw);
    // A relay-owned null (a PATCH that removed a value) means "back to the default", never a null on the wire.
    const relay = Object.fromEntries(Object.entries(this.log.models.voice.settings(section)).filter(([, v]) => v !== null));
    const base: Record<string, VoiceSettingValue> = { ...VoiceService.DEFAULTS[section], provider: this.defaultProvider(), ...relay };
    let configScope: 'relay' | 'profile' | 'global' = 'relay';
    let fallback = false;
    if (profile !== null) {
      const scope = this.files.resolve(profile);
      const overrides = profileOverrides(scope.data, section);
      if (Object.keys(overrides).length > 0) {
        Object.assign(base, overrides);
        configScope = scope.scope;
        fallback = scope.fallbackToGlobal;
      } else fallback = true;
    }
    const d = this.defaultsFor(section, this.providerId(base.provider));
    for (const k of ['model', 'voice', 'sample_rate'] as const) if (base[k] === undefined) base[k] = d[k];
    return { ok: true, success: true, ...base, provider: base.provider, profile, config_scope: configScope, fallback_to_global: fallback };
  }

  /** Whether the section is on as its answer reports it: its `enabled`, or RELAY_REALTIME_VOICE_ENABLED for the realtime ones. */
  enabledIn(section: VoiceSection, s: Record<string, VoiceSettingValue>): boolean {
    return s.enabled === true || (section !== 'voice_output' && this.config.realtimeVoiceEnabled);
  }

  /** Every provider of this relay as the app's settings screens decode one (voice-catalog.ts). */
  async providerInfos(section: VoiceSection): Promise<ProviderInfo[]> {
    return Promise.all([...this.providers.values()].map(async (p) => providerInfo(section, p, await p.options())));
  }

  /**
   * The settings answer the app decodes (`VoiceOutputConfig` / `RealtimeVoiceConfig`, RelayVoiceClient.kt
   * 3133-3152 and 3290-3316): the settings themselves, `enabled` as in effect, `protocol`, the
   * `default_provider`/`default_model`/`default_voice`, and `providers` as a list of provider objects. The
   * selected provider's option lists stay at the top level for the clients that read them there.
   */
  async settingsWithOptions(section: VoiceSection, profileRaw: unknown) {
    const s = this.settings(section, profileRaw);
    const selected = this.providerId(s.provider);
    const id = selected ?? this.defaultProvider();
    const o = sectionOptions(section, await this.provider(id).options());
    const native = selected === 'openai';
    const agent =
      section === 'realtime_agent'
        ? {
            experimental: true,
            broker_mode: native ? 'provider_realtime' : 'fallback_engine',
            fallback_engine: 'stt -> agent API (RELAY_WEBAPI_URL /v1/chat/completions) -> voice output',
            tool_surface: native ? [...this.wire.tools] : [],
            limits: { max_context_messages: 14, max_context_chars: 1500, max_input_audio_bytes: 16 * 1024 * 1024, max_text_chars: MAX_TTS_CHARS },
          }
        : section === 'realtime_voice'
          ? { experimental: true }
          : {};
    return {
      ...s,
      ...agent,
      enabled: this.enabledIn(section, s),
      protocol: this.wire.sectionProtocol(section),
      default_provider: selected ?? (typeof s.provider === 'string' ? s.provider : id),
      default_model: String(s.model),
      default_voice: String(s.voice),
      sample_rate: typeof s.sample_rate === 'number' ? s.sample_rate : this.defaultsFor(section, id).sample_rate,
      providers: await this.providerInfos(section),
      resume_supported: true,
      models: o.models,
      voices: o.voices,
      languages: o.languages,
      sample_rates: o.sample_rates,
    };
  }

  /**
   * PATCH: a named profile (`?profile=`, as the app sends it, or the body's `profile`) with a config file is
   * rewritten (atomically); otherwise the default scope changes (the relay-owned defaults, or the global
   * file for `default`). A relay-wide switch (`enabled`: it turns the feature on or off for every phone) in
   * the default scope is the operator's (loopback): a phone or the API bearer that sends it with the value
   * in effect (the app's "Server default" screen re-sends what it read) has it ignored, and one that would
   * flip it gets 403 naming the field. Their other fields (provider, model, voice, ...) are theirs to save.
   */
  async patchSettings(section: VoiceSection, body: unknown, principal: Principal, queryProfile?: unknown) {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new DomainError('validation_failed', 'invalid', 'send a JSON object of settings', { success: false });
    const b = body as Record<string, unknown>;
    if (queryProfile !== undefined && b.profile !== undefined && queryProfile !== b.profile)
      throw new DomainError('validation_failed', 'invalid', 'the profile is named twice (?profile= and the body), differently', { success: false });
    const profile = this.profileOf(queryProfile ?? b.profile);
    const changed = parseVoiceSettingsPatch(section, b);
    if (typeof changed.provider === 'string' && this.providerId(changed.provider) === null)
      throw new DomainError(
        'voice.unknown_provider',
        'invalid',
        `no voice provider "${changed.provider}"; this relay has: ${[...this.providers.keys()].join(', ')}`,
        { success: false },
      );
    const defaultScope = profile === null || profile === 'default';
    if (defaultScope && principal.kind !== 'operator') {
      const current = this.settings(section, profile);
      for (const key of RELAY_SWITCHES) {
        if (!(key in changed)) continue;
        if (changed[key] === this.enabledIn(section, current)) {
          delete changed[key];
          continue;
        }
        throw new DomainError(
          'voice.relay_settings_operator_only',
          'forbidden',
          `"${key}" is a relay-wide switch of ${section} (it applies to every phone): only the operator changes it, with a PATCH from the relay's host (loopback, no bearer); pass ?profile=<name> to change your profile's`,
          { success: false, field: key },
        );
      }
      if (Object.keys(changed).length === 0) return this.settingsWithOptions(section, profile);
    }
    if (profile !== null) {
      let file: { path: string; sha256: string } | null;
      try {
        file = this.files.writeProfileSection(profile, section, changed);
      } catch (err) {
        if (err instanceof ConfigFileError) throw new DomainError('voice.config_unwritable', 'conflict', err.message, { success: false });
        throw err;
      }
      if (file) {
        await this.log.run(actorOf(principal), () => recordProfileVoiceSettings(section, profile, changed, file));
        return this.settingsWithOptions(section, profile);
      }
      if (principal.kind !== 'operator' && !defaultScope)
        throw new DomainError(
          'voice.profile_not_found',
          'not_found',
          `profile "${profile}" has no config file to write ${section} settings to (the relay-wide ones are the operator's)`,
          { success: false },
        );
    }
    const effective = this.settings(section, null);
    await this.log.run(actorOf(principal), () => changeRelayVoiceSettings(effective, section, changed));
    return this.settingsWithOptions(section, profile);
  }

  /** A provider named in a path, in any spelling a config uses (`openai_tts`), or 404. */
  private providerFromPath(raw: string): VoiceProvider {
    const id = PROVIDER_ALIASES[raw.trim().toLowerCase()];
    return this.provider(id ?? raw);
  }

  /**
   * GET .../providers/{id}/options, as the app decodes it (`VoiceProviderOptionsResponse`,
   * RelayVoiceClient.kt 3220-3241): `provider` is the provider object, `provider_id` its id; the section's
   * defaults; `dynamic` says whether the lists were asked of the provider. The flat lists stay for the
   * clients that read them.
   */
  async providerOptions(section: VoiceSection, providerId: string, profileRaw: unknown) {
    const provider = this.providerFromPath(providerId);
    const s = this.settings(section, profileRaw);
    const o = sectionOptions(section, await provider.options());
    return {
      ok: true,
      success: true,
      mode: section,
      protocol: this.wire.answerProtocol(section, 'options'),
      schema_version: 1,
      provider_id: provider.id,
      provider: providerInfo(section, provider, o),
      label: provider.label,
      default_provider: this.providerId(s.provider) ?? String(s.provider),
      default_model: String(s.model),
      default_voice: String(s.voice),
      sample_rate: typeof s.sample_rate === 'number' ? s.sample_rate : this.defaultsFor(section, provider.id).sample_rate,
      ...(typeof s.language === 'string' ? { language: s.language } : {}),
      models: o.models,
      voices: o.voices,
      languages: o.languages,
      sample_rates: o.sample_rates,
      source: o.source,
      dynamic: {
        attempted: provider.id === 'openai' && provider.unavailable() === null,
        status: o.source,
        source: o.source === 'discovered' ? 'provider_api' : 'relay_static',
        message: o.source === 'discovered' ? 'asked of the provider (kept 10 minutes)' : "this relay's built-in list",
      },
      profile: s.profile,
      config_scope: s.config_scope,
      fallback_to_global: s.fallback_to_global,
    };
  }

  /**
   * POST .../providers/{id}/validate: each field given checked against the section's options. 200 with
   * `valid: false` when a check fails; `checks` as the app reads them (`[{id, status: ok|warning|error,
   * message}]`, RelayVoiceClient.kt 3272-3277), with `name` and `ok` kept beside.
   */
  async validate(section: VoiceSection, providerId: string, body: unknown, queryProfile?: unknown) {
    const provider = this.providerFromPath(providerId);
    const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
    this.profileOf(queryProfile ?? b.profile);
    const o = sectionOptions(section, await provider.options());
    const checks: Array<{ id: string; status: 'ok' | 'warning' | 'error'; message: string; name: string; ok: boolean }> = [];
    const check = (name: string, status: 'ok' | 'warning' | 'error', message: string) =>
      checks.push({ id: `${name}_known`, status, message, name, ok: status === 'ok' });
    const why = provider.unavailable();
    checks.push({
      id: 'provider_available',
      status: why === null ? 'ok' : 'error',
      message: why ?? `${provider.label} is available`,
      name: 'provider',
      ok: why === null,
    });
    const model = str(b.model);
    if (b.model !== undefined)
      if (model !== null && o.models.includes(model)) check('model', 'ok', `model ${model} is offered`);
      else check('model', 'error', `model ${String(b.model).slice(0, 60)} is not one of ${o.models.join(', ')}`);
    const voice = str(b.voice);
    if (b.voice !== undefined) {
      const ok =
        voice !== null &&
        (o.voices.some((v) => v.id === voice) || (provider.id === 'offline' && /^[a-z]{2,3}(-[a-z0-9]{2,8})?(\+[a-z0-9]{1,16})?$/i.test(voice)));
      check('voice', ok ? 'ok' : 'error', ok ? `voice ${voice} is offered` : `voice ${String(b.voice).slice(0, 60)} is not offered`);
    }
    const rate = int(b.sample_rate);
    if (b.sample_rate !== undefined)
      if (rate !== null && o.sample_rates.includes(rate)) check('sample_rate', 'ok', `${rate} Hz is offered`);
      else check('sample_rate', 'error', `sample_rate must be one of ${o.sample_rates.join(', ')}`);
    const lang = str(b.language);
    if (b.language !== undefined)
      if (lang !== null && o.languages.includes(lang)) check('language', 'ok', `language ${lang} is offered`);
      else check('language', 'warning', `language ${String(b.language).slice(0, 60)} is not one of ${o.languages.join(', ')}; it is sent as given`);
    const errors = checks.filter((c) => c.status === 'error');
    const warnings = checks.filter((c) => c.status === 'warning');
    return {
      ok: true,
      success: true,
      mode: section,
      protocol: this.wire.answerProtocol(section, 'validate'),
      provider_id: provider.id,
      model,
      voice,
      sample_rate: rate,
      language: lang,
      valid: errors.length === 0,
      checks,
      summary:
        errors.length > 0
          ? errors.map((c) => c.message).join('; ')
          : warnings.length > 0
            ? `${provider.label}: valid, with warnings: ${warnings.map((c) => c.message).join('; ')}`
            : `${provider.label}: the selection is valid`,
      dynamic: {
        attempted: provider.id === 'openai' && why === null,
        status: o.source,
        source: o.source === 'discovered' ? 'provider_api' : 'relay_static',
      },
    };
  }

  // ---- security toggle --------------------------------------------------------------------------

  security() {
    return {
      ok: true,
      allow_insecure_api_bearer: this.log.models.voice.allowInsecureApiBearer,
      trust_proxy_headers: this.config.trustProxyHeaders,
      tls: this.config.tls !== null,
      api_key_configured: Boolean(this.config.apiServer.key),
    };
  }

  async setSecurity(body: unknown) {
    const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : null) as Record<string, unknown> | null;
    if (!b || typeof b.allow_insecure_api_bearer !== 'boolean' || Object.keys(b).length !== 1)
      throw new DomainError('validation_failed', 'invalid', 'send {"allow_insecure_api_bearer": true|false}');
    await this.log.run('operator', (models) => setInsecureApiBearer(models, b.allow_insecure_api_bearer as boolean));
    return this.security();
  }
}

/** A profile's overrides of a settings section (`voice_output` falls back to its `tts` section's provider/model/voice). */
function profileOverrides(data: YamlMap, section: VoiceSection): Record<string, VoiceSettingValue> {
  let s = selectedProviderConfig(data, section);
  const fromTts = Object.keys(s).length === 0 && section === 'voice_output';
  if (fromTts) s = selectedProviderConfig(data, 'tts');
  const out: Record<string, VoiceSettingValue> = {};
  const provider = str(s.provider);
  if (provider) out.provider = provider;
  const model = str(s.model) ?? str(s.model_id);
  if (model) out.model = model;
  const voice = str(s.voice) ?? str(s.voice_id);
  if (voice) out.voice = voice;
  const rate = int(s.sample_rate);
  if (rate !== null) out.sample_rate = rate;
  if (!fromTts) {
    for (const k of ['language', 'codec', 'fallback_engine']) if (str(s[k])) out[k] = str(s[k]);
    for (const k of ['optimize_streaming_latency']) if (int(s[k]) !== null) out[k] = int(s[k]);
    for (const k of ['enabled', 'text_normalization', 'auto_speech_tags', 'fallback_enabled']) if (bool(s[k]) !== null) out[k] = bool(s[k]);
  }
  return out;
}
