import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import type { VoiceSection } from '@svc/events';
import type { Logger } from 'pino';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { OfflineVoiceProvider } from './offline-provider';
import { OpenAiVoiceProvider } from './openai-provider';
import type { VoiceScope } from './voice-config';
import type { YamlMap } from '../common/agent-config/config-yaml-parse';
import { selectedProviderConfig, str } from './voice-yaml';
import { languageUnavailable } from './speech-language';
import { VoiceProviderError, type ProviderDefaults, type VoiceProvider } from './voice-provider';

/**
 * The voice providers this relay has: the cloud one (OpenAI-compatible, with a key) and the offline one
 * (programs on this host, no network). Resolves the names configs and callers use, says which one a
 * config without a name gets, and turns a provider's failure into the caller's error.
 */
@Injectable()
export class VoiceProviders {
  readonly offline: OfflineVoiceProvider;
  private readonly cloud: OpenAiVoiceProvider;
  private readonly byId: Map<string, VoiceProvider>;
  private readonly byAlias = new Map<string, VoiceProvider>();

  constructor(
    clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.offline = new OfflineVoiceProvider(config.voice, logger);
    this.cloud = new OpenAiVoiceProvider(config.voice, () => clock.now().getTime());
    this.byId = new Map<string, VoiceProvider>([this.offline, this.cloud].map((p) => [p.id, p]));
    for (const p of this.byId.values()) for (const alias of p.aliases) this.byAlias.set(alias, p);
  }

  all(): VoiceProvider[] {
    return [...this.byId.values()];
  }

  /** The default when a config names none: the cloud provider when its key is set, else the offline one (works with no network). */
  defaultId(): string {
    return (this.cloud.unavailable() === null ? this.cloud : this.offline).id;
  }

  /** A configured provider name (any spelling a config uses) to one of ours; none named is the default; null: this relay does not have it. */
  idOf(configured: unknown): string | null {
    const name = str(configured);
    if (name === null) return this.defaultId();
    return this.byAlias.get(name.toLowerCase())?.id ?? null;
  }

  /** A provider by id, or 404 naming the ones there are. */
  get(id: string): VoiceProvider {
    const p = this.byId.get(id);
    if (!p)
      throw new DomainError(
        'voice.unknown_provider',
        'not_found',
        `no voice provider "${id.slice(0, 40)}"; this relay has: ${this.ids().join(', ')}`,
        {
          success: false,
        },
      );
    return p;
  }

  /** A provider named in a path, in any spelling a config uses (`openai_tts`), or 404. */
  fromPath(raw: string): VoiceProvider {
    return this.get(this.byAlias.get(raw.trim().toLowerCase())?.id ?? raw);
  }

  /** Its defaults; a provider this relay does not have gets the offline one's. */
  defaultsOf(id: string | null, section: VoiceSection): ProviderDefaults {
    return ((id === null ? undefined : this.byId.get(id)) ?? this.offline).defaults(section);
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** The providers this relay has, and why each cannot serve now (null when it can). Never a key. */
  states(): Array<{ provider: string; unavailable: string | null }> {
    return this.all().map((p) => ({ provider: p.id, unavailable: p.unavailable() }));
  }

  /** A scope's tts or stt section, its provider resolved (or an explanation of why none). */
  section(scope: VoiceScope, name: 'tts' | 'stt'): { cfg: YamlMap; configured: string | null; providerId: string | null } {
    const cfg = selectedProviderConfig(scope.data, name);
    return { cfg, configured: str(cfg.provider), providerId: this.idOf(cfg.provider) };
  }

  /** Refused while the provider cannot serve: its own error (a missing key is spec 7's 500). */
  assertAvailable(provider: VoiceProvider): void {
    const refused = provider.unavailableError();
    if (refused) throw this.failure(refused);
  }

  /**
   * The provider's own name for the language a caller asked for (null: none asked, the voice decides), or 400
   * `voice.language_unavailable` before any work starts. `whose` says where it came from when it was not the request.
   */
  async language(provider: VoiceProvider, raw: string | null, whose = ''): Promise<string | null> {
    if (raw === null) return null;
    const r = await provider.speechLanguage(raw);
    if (!r.ok) throw languageUnavailable(raw, `${r.why}${whose}`);
    return r.language;
  }

  /** A provider's failure as the caller sees it; a missing key is spec 7's 500 "no API key available". */
  failure(err: unknown): DomainError {
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
}
