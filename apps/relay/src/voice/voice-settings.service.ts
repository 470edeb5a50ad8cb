import { Inject, Injectable } from '@nestjs/common';
import {
  actorOf,
  changeRelayVoiceSettings,
  DomainError,
  MAX_CONTEXT_CHARS,
  MAX_CONTEXT_MESSAGES,
  MAX_INPUT_AUDIO_BYTES,
  MAX_TTS_CHARS,
  recordProfileVoiceSettings,
  voiceSettingsChanges,
  type Principal,
} from '@svc/domain';
import type { VoiceSection, VoiceSettingValue } from '@svc/events';
import type { RelayConfig } from '../common/config/relay-config';
import { ConfigFileError } from '../common/agent-config/config-yaml-parse';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { providerInfo, type ProviderInfo } from './voice-catalog';
import { profileNamed, VoiceConfigFiles } from './voice-config';
import type { SettingsPatch } from './voice.dto';
import { VoiceProviders } from './voice-providers';
import { VoiceWire } from './voice-wire';
import { profileOverrides } from './voice-yaml';

/** Settings that switch a feature on or off for every phone: in the default scope, only the operator flips them. */
const RELAY_SWITCHES = ['enabled'] as const;

/** What each section is with nothing configured (the provider, model, voice and sample rate come from the provider). */
const DEFAULTS: Record<VoiceSection, Record<string, VoiceSettingValue>> = {
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

export type SectionSettings = Record<string, VoiceSettingValue> & {
  ok: true;
  success: true;
  provider: VoiceSettingValue;
  profile: string | null;
  config_scope: 'relay' | 'profile' | 'global';
  fallback_to_global: boolean;
};

/**
 * The settings of the voice output, realtime voice and realtime agent sections: built-in defaults, under
 * the relay-owned values (PATCHes without a profile; the event log holds them), under a profile's config
 * file; the answers the app's settings screens decode; and their PATCH.
 */
@Injectable()
export class VoiceSettings {
  constructor(
    private readonly loop: CommandLoop,
    private readonly providers: VoiceProviders,
    private readonly files: VoiceConfigFiles,
    private readonly wire: VoiceWire,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  /**
   * GET /voice/{output,realtime,realtime-agent}/config: defaults, then relay-owned values, then the
   * profile's; the model, voice and sample rate the provider chosen would use when none is named.
   */
  settings(section: VoiceSection, profile: string | null): SectionSettings {
    // A relay-owned null (a PATCH that removed a value) means "back to the default", never a null on the wire.
    const relay = Object.fromEntries(Object.entries(this.loop.models.voice.settings(section)).filter(([, v]) => v !== null));
    const base: Record<string, VoiceSettingValue> = { ...DEFAULTS[section], provider: this.providers.defaultId(), ...relay };
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
    const d = this.providers.defaultsOf(this.providers.idOf(base.provider), section);
    for (const k of ['model', 'voice', 'sample_rate'] as const) if (base[k] === undefined) base[k] = d[k];
    return { ok: true, success: true, ...base, provider: base.provider, profile, config_scope: configScope, fallback_to_global: fallback };
  }

  /**
   * The section's `language` when someone set it (a PATCH, or the profile's config), else null: the built-in `en`
   * is what the screens show, and leaves the voice to decide (a profile's `voice: de` goes on speaking German).
   */
  configuredLanguage(section: VoiceSection, profile: string | null): string | null {
    const own = profile === null ? undefined : profileOverrides(this.files.resolve(profile).data, section).language;
    const value = own ?? this.loop.models.voice.settings(section).language;
    return typeof value === 'string' && value.trim() !== '' ? value : null;
  }

  /** Whether the section is on as its answer reports it: its `enabled`, or RELAY_REALTIME_VOICE_ENABLED for the realtime ones. */
  enabledIn(section: VoiceSection, s: Record<string, VoiceSettingValue>): boolean {
    return s.enabled === true || (section !== 'voice_output' && this.config.realtimeVoiceEnabled);
  }

  /** Every provider of this relay as the app's settings screens decode one (voice-catalog.ts). */
  private async providerInfos(section: VoiceSection): Promise<ProviderInfo[]> {
    return Promise.all(this.providers.all().map(async (p) => providerInfo(section, p, await p.options(section))));
  }

  /**
   * The settings answer the app decodes (`VoiceOutputConfig` / `RealtimeVoiceConfig`, RelayVoiceClient.kt
   * 3133-3152 and 3290-3316): the settings themselves, `enabled` as in effect, `protocol`, the
   * `default_provider`/`default_model`/`default_voice`, and `providers` as a list of provider objects. The
   * selected provider's option lists stay at the top level for the clients that read them there.
   */
  async withOptions(section: VoiceSection, profileRaw: string | null | undefined) {
    const s = this.settings(section, profileNamed(profileRaw));
    const selected = this.providers.idOf(s.provider);
    const provider = this.providers.get(selected ?? this.providers.defaultId());
    const o = await provider.options(section);
    const native = selected !== null && provider.realtime;
    const agent =
      section === 'realtime_agent'
        ? {
            experimental: true,
            broker_mode: native ? 'provider_realtime' : 'fallback_engine',
            fallback_engine: 'stt -> agent API (RELAY_WEBAPI_URL /v1/chat/completions) -> voice output',
            tool_surface: native ? [...this.wire.tools] : [],
            limits: {
              max_context_messages: MAX_CONTEXT_MESSAGES,
              max_context_chars: MAX_CONTEXT_CHARS,
              max_input_audio_bytes: MAX_INPUT_AUDIO_BYTES,
              max_text_chars: MAX_TTS_CHARS,
            },
          }
        : section === 'realtime_voice'
          ? { experimental: true }
          : {};
    return {
      ...s,
      ...agent,
      enabled: this.enabledIn(section, s),
      protocol: this.wire.sectionProtocol(section),
      default_provider: selected ?? (typeof s.provider === 'string' ? s.provider : provider.id),
      default_model: String(s.model),
      default_voice: String(s.voice),
      sample_rate: typeof s.sample_rate === 'number' ? s.sample_rate : provider.defaults(section).sample_rate,
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
   * `sent`: the keys the body named (an unknown one is refused by name).
   */
  async patch(section: VoiceSection, body: SettingsPatch, sent: readonly string[], principal: Principal, queryProfile?: string) {
    if (queryProfile !== undefined && body.profile !== undefined && queryProfile !== body.profile)
      throw new DomainError('validation_failed', 'invalid', 'the profile is named twice (?profile= and the body), differently', { success: false });
    const profile = profileNamed(queryProfile ?? body.profile);
    const changed = voiceSettingsChanges(section, sent, body);
    if (typeof changed.provider === 'string' && this.providers.idOf(changed.provider) === null)
      throw new DomainError(
        'voice.unknown_provider',
        'invalid',
        `no voice provider "${changed.provider}"; this relay has: ${this.providers.ids().join(', ')}`,
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
      if (Object.keys(changed).length === 0) return this.withOptions(section, profile);
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
        await this.loop.run(actorOf(principal), () => recordProfileVoiceSettings(section, profile, changed, file));
        return this.withOptions(section, profile);
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
    await this.loop.run(actorOf(principal), () => changeRelayVoiceSettings(effective, section, changed));
    return this.withOptions(section, profile);
  }
}
