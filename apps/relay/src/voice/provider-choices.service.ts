import { Injectable } from '@nestjs/common';
import type { VoiceSection } from '@svc/events';
import { providerInfo } from './voice-catalog';
import { profileNamed } from './voice-config';
import type { SelectionDto } from './voice.dto';
import type { ProviderOptions, VoiceProvider } from './voice-provider';
import { VoiceProviders } from './voice-providers';
import { VoiceSettings } from './voice-settings.service';
import { VoiceWire } from './voice-wire';
import { int, str } from './voice-yaml';

type Check = { id: string; status: 'ok' | 'warning' | 'error'; message: string; name: string; ok: boolean };

/**
 * What a provider offers for a section (`GET .../providers/{id}/options`) and whether a selection is
 * among it (`POST .../providers/{id}/validate`), as the app's settings screens decode them.
 */
@Injectable()
export class VoiceProviderChoices {
  constructor(
    private readonly providers: VoiceProviders,
    private readonly settings: VoiceSettings,
    private readonly wire: VoiceWire,
  ) {}

  /**
   * The options answer (`VoiceProviderOptionsResponse`, RelayVoiceClient.kt 3220-3241): `provider` is the
   * provider object, `provider_id` its id; the section's defaults; `dynamic` says whether the lists were
   * asked of the provider. The flat lists stay for the clients that read them.
   */
  async options(section: VoiceSection, providerId: string, profileRaw: string | undefined) {
    const provider = this.providers.fromPath(providerId);
    const s = this.settings.settings(section, profileNamed(profileRaw));
    const o = await provider.options(section);
    return {
      ok: true,
      success: true,
      mode: section,
      protocol: this.wire.answerProtocol(section, 'options'),
      schema_version: 1,
      provider_id: provider.id,
      provider: providerInfo(section, provider, o),
      label: provider.label,
      default_provider: this.providers.idOf(s.provider) ?? String(s.provider),
      default_model: String(s.model),
      default_voice: String(s.voice),
      sample_rate: typeof s.sample_rate === 'number' ? s.sample_rate : provider.defaults(section).sample_rate,
      ...(typeof s.language === 'string' ? { language: s.language } : {}),
      models: o.models,
      voices: o.voices,
      languages: o.languages,
      sample_rates: o.sample_rates,
      source: o.source,
      dynamic: {
        ...dynamic(provider, o),
        message: o.source === 'discovered' ? 'asked of the provider (kept 10 minutes)' : "this relay's built-in list",
      },
      profile: s.profile,
      config_scope: s.config_scope,
      fallback_to_global: s.fallback_to_global,
    };
  }

  /**
   * Each field given checked against the section's options. 200 with `valid: false` when a check fails;
   * `checks` as the app reads them (`[{id, status: ok|warning|error, message}]`, RelayVoiceClient.kt
   * 3272-3277), with `name` and `ok` kept beside. The fields are taken as sent, whatever their type.
   */
  async validate(section: VoiceSection, providerId: string, b: SelectionDto) {
    const provider = this.providers.fromPath(providerId);
    const o = await provider.options(section);
    const checks: Check[] = [];
    const check = (name: string, status: Check['status'], message: string) =>
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
      const ok = voice !== null && (o.voices.some((v) => v.id === voice) || provider.takesVoice(voice));
      check('voice', ok ? 'ok' : 'error', ok ? `voice ${voice} is offered` : `voice ${String(b.voice).slice(0, 60)} is not offered`);
    }
    const rate = int(b.sample_rate);
    if (b.sample_rate !== undefined)
      if (rate !== null && o.sample_rates.includes(rate)) check('sample_rate', 'ok', `${rate} Hz is offered`);
      else check('sample_rate', 'error', `sample_rate must be one of ${o.sample_rates.join(', ')}`);
    const lang = str(b.language);
    if (b.language !== undefined) {
      // The rule a session is made by (VoiceProviders.language): a language the provider cannot speak is refused there.
      const spoken = lang === null ? null : await provider.speechLanguage(lang);
      if (spoken?.ok) check('language', 'ok', `language ${lang} is spoken (${spoken.language})`);
      else check('language', 'error', spoken ? spoken.why : 'language must be a language code, like de or pt-BR');
    }
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
      dynamic: dynamic(provider, o),
    };
  }
}

/** Whether the lists were asked of the provider, and where they came from. */
function dynamic(provider: VoiceProvider, o: ProviderOptions) {
  return {
    attempted: provider.discoversOptions && provider.unavailable() === null,
    status: o.source,
    source: o.source === 'discovered' ? 'provider_api' : 'relay_static',
  };
}
