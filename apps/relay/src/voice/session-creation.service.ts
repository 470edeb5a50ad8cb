import { Inject, Injectable } from '@nestjs/common';
import { actorOf, DomainError, epoch, MAX_CONTEXT_CHARS, openVoiceSession, VOICE_SESSION_CONNECT_SECONDS, type Principal } from '@svc/domain';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { Secrets, secureRandomBytes } from '../common/auth/secrets';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { TokenBuckets } from './creation-limit';
import { KINDS, type Kind } from './session-kinds';
import { profileNamed } from './voice-config';
import type { AgentSessionDto, VoiceSessionDto } from './voice.dto';
import { VoiceProviders } from './voice-providers';
import { newSession } from './voice-session';
import { VoiceSettings } from './voice-settings.service';
import { VoiceWire } from './voice-wire';

/**
 * `POST /voice/{output,realtime,realtime-agent}/session` (the realtime ones are experimental: off until
 * enabled): the provider, model and voice a session speaks with, from its body and its section's
 * settings; a resume token; the event. Bounded per caller (a relay session, or the API bearer): a
 * creation rate (429 with Retry-After) and a number of sessions open at once (openVoiceSession).
 */
@Injectable()
export class VoiceSessionCreation {
  /** Creations per caller, in each kind's bucket (session-kinds.ts). */
  private readonly creations: Record<'output' | 'realtime', TokenBuckets>;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly settings: VoiceSettings,
    private readonly providers: VoiceProviders,
    private readonly wire: VoiceWire,
    private readonly secrets: Secrets,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    const v = config.voice;
    this.creations = {
      output: new TokenBuckets(v.outputSessionsPerMinute, Math.max(1, Math.ceil(v.outputSessionsPerMinute / 2))),
      realtime: new TokenBuckets(v.realtimeSessionsPerMinute, Math.max(1, Math.ceil(v.realtimeSessionsPerMinute / 2))),
    };
  }

  /** A session of `kind` for the caller, as its body and the section's settings say; the answer the caller gets. */
  async create(kind: Kind, body: VoiceSessionDto | AgentSessionDto, principal: Principal) {
    const { section, segment, bucket, title } = KINDS[kind];
    const actor = actorOf(principal);
    const wait = this.creations[bucket].take(actor, this.clock.now().getTime());
    if (wait > 0)
      throw new DomainError('rate_limited', 'rate_limited', `too many ${segment} voice sessions created; retry in ${wait} s`, {
        success: false,
        retry_after: wait,
      });
    const settings = this.settings.settings(section, profileNamed(body.profile));
    if (!this.settings.enabledIn(section, settings))
      throw new DomainError(
        `voice.${kind}_disabled`,
        'not_found',
        kind === 'output'
          ? `${title} is disabled (${section}.enabled: false)`
          : `${title} is disabled (experimental: the operator turns it on with PATCH /voice/${segment}/config {"enabled": true} from the relay's host, or RELAY_REALTIME_VOICE_ENABLED=1; a profile's config may enable it for that profile)`,
        { success: false },
      );
    const provider = this.providers.idOf(body.provider ?? settings.provider);
    if (provider === null)
      throw new DomainError('voice.unknown_provider', 'invalid', `no voice provider "${String(body.provider ?? settings.provider).slice(0, 40)}"`, {
        success: false,
      });
    const engine = this.providers.get(provider);
    this.providers.assertAvailable(engine);
    // The language the app sent, else the one saved in the settings; refused here, before anything is written.
    const saved = body.language === undefined ? this.settings.configuredLanguage(section, settings.profile) : null;
    const language = await this.providers.language(engine, body.language ?? saved, saved === null ? '' : ` (the ${section} settings' language)`);
    const agent = kind === 'realtime_agent' ? agentFields(body as AgentSessionDto) : { chatSessionId: null, context: [] };
    const id = secureRandomBytes(18).toString('base64url');
    const resumeToken = secureRandomBytes(32).toString('base64url');
    // The app decodes `model` and `voice` as non-null strings: always name one. The settings' own apply to
    // their provider; a session asking another provider gets that provider's defaults.
    const sameProvider = this.providers.idOf(settings.provider) === provider;
    const defaults = engine.defaults(section);
    const voiceName = body.voice ?? (sameProvider && typeof settings.voice === 'string' ? settings.voice : defaults.voice);
    const model = body.model ?? (sameProvider && typeof settings.model === 'string' ? settings.model : defaults.model);
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + VOICE_SESSION_CONNECT_SECONDS * 1000).toISOString();
    await this.loop.run(actor, (models) =>
      openVoiceSession(models, actor, this.config.voice.maxOpenSessions, {
        sessionId: id,
        kind,
        profile: settings.profile,
        provider,
        via: principal.kind === 'api' ? 'api' : 'session',
        expiresAt,
        ...(agent.chatSessionId ? { chatSessionId: agent.chatSessionId } : {}),
      }),
    );
    const { replayMaxFrames: maxFrames, replayMaxBytes: maxBytes } = this.config.voice;
    const s = newSession(
      kind,
      {
        id,
        actor,
        tokenPrefix: principal.kind === 'device' ? principal.tokenPrefix : null,
        engine,
        model,
        voice: voiceName,
        language,
        sampleRate: defaults.sample_rate,
        profile: settings.profile,
        createdAt: now.getTime(),
        resumeDigest: this.secrets.digest(resumeToken),
        replay: { maxFrames, maxBytes },
      },
      agent,
    );
    const answer = {
      ok: true,
      success: true,
      session_id: id,
      websocket_path: `/voice/${segment}/${id}`,
      ...(kind === 'realtime_agent'
        ? engine.realtime
          ? { chat_session_id: agent.chatSessionId, broker_mode: 'provider_realtime', tool_surface: [...this.wire.tools] }
          : { chat_session_id: agent.chatSessionId, broker_mode: 'fallback_engine', tool_surface: [] }
        : {}),
      expires_at: epoch(expiresAt),
      resume_supported: true,
      resume_token: resumeToken,
      resume_ttl_ms: this.config.voice.resumeGraceSeconds * 1000,
      provider,
      model,
      voice: voiceName,
      ...(language === null ? {} : { language }),
      sample_rate: s.sampleRate,
      codec: 'pcm',
      protocol: this.wire.protocol(kind),
      profile: settings.profile,
      config_scope: settings.config_scope,
      fallback_to_global: settings.fallback_to_global,
    };
    return { session: s, answer };
  }
}

/** The realtime agent's chat session and conversation as the body gave them (the DTO kept the last 14 messages). */
function agentFields(b: AgentSessionDto) {
  return {
    chatSessionId: b.chat_session_id || null,
    context: (b.context_messages ?? []).map((m) => ({ role: m.role, content: m.content.slice(0, MAX_CONTEXT_CHARS) })),
  };
}
