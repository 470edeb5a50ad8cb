import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { DomainError, epoch, type Principal } from '@svc/domain';
import type { VoiceSection } from '@svc/events';
import type { VoiceCallDefault, VoiceProviderRow, VoiceSectionRow, VoiceSecurityAnswer, VoiceSwitchAnswer, VoiceView } from '@svc/console-api';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import type { RelayConfig } from '../../common/config/relay-config';
import { RELAY_CONFIG } from '../../common/auth/tokens';
import { RelaySecurity } from '../../voice/relay-security.service';
import { KINDS, kindOfSection } from '../../voice/session-kinds';
import type { SettingsPatch } from '../../voice/voice.dto';
import { VoiceProviders } from '../../voice/voice-providers';
import { VoiceService } from '../../voice/voice.service';
import { VoiceSessions } from '../../voice/voice-sessions.service';
import { VoiceSettings } from '../../voice/voice-settings.service';
import { ConsoleFeatures } from '../console-features';
import { endedSessionView, openSessionView, usageView, voiceCallView } from './voice-view';
import { VoiceSectionParam, VoiceSecurityDto, VoiceSwitchDto } from './voice-profiles.dto';

const OPERATOR: Principal = { kind: 'operator' };
const SECTIONS: readonly VoiceSection[] = ['voice_output', 'realtime_voice', 'realtime_agent'];
const TITLE: Record<VoiceSection, string> = { voice_output: 'Voice output', realtime_voice: 'Realtime voice', realtime_agent: 'Realtime agent' };

/**
 * Voice page: the providers and which one each section uses, whether it can serve and why not; open and
 * recent sessions; recent transcribe/synthesize calls with outcome and latency; provider usage; and the
 * operator's switches: each section's relay-wide `enabled` (through VoiceSettings, as PATCH
 * /voice/.../config from loopback) and the API-bearer escape hatch (through RelaySecurity, as PATCH
 * /relay/security). Both record their usual events with the operator as actor.
 */
@Controller('/console/api/voice')
export class VoiceConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly providers: VoiceProviders,
    private readonly settings: VoiceSettings,
    private readonly voice: VoiceService,
    private readonly sessions: VoiceSessions,
    private readonly security: RelaySecurity,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    features.add({ id: 'voice', title: 'Voice', order: 42 });
  }

  @Get()
  @Auth('operator')
  view(): VoiceView {
    const m = this.loop.models;
    // Each provider asked once: whether its programs or key are there is a look at the disk.
    const why = this.unavailability();
    const sections = SECTIONS.map((s) => this.section(s, why));
    const calls = this.callsDefault();
    const connected = this.sessions.connected();
    const stats = m.voice.stats();
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      providers: this.providers.all().map((p): VoiceProviderRow => ({
        provider: p.id,
        label: p.label,
        available: why.get(p.id) === null,
        unavailable_reason: why.get(p.id) ?? null,
        stt_unavailable_reason: p.sttUnavailable(),
        realtime: p.realtime,
        default_for: [
          ...sections.filter((s) => s.provider === p.id).map((s) => s.section),
          ...(calls.synthesize.provider === p.id ? (['synthesize'] as const) : []),
          ...(calls.transcribe.provider === p.id ? (['transcribe'] as const) : []),
        ],
      })),
      sections,
      calls_default: calls,
      open_sessions: m.voice
        .openSessions()
        .toSorted((a, b) => b.createdAt - a.createdAt)
        .map((s) => openSessionView(s, connected.has(s.sessionId), m.voiceActivity.resumesOf(s.sessionId), this.sessions.heldBytesOf(s.sessionId))),
      held: this.held(),
      ended_sessions: m.voiceActivity.recentSessions().map(endedSessionView),
      calls: m.voiceActivity.recentCalls().map(voiceCallView),
      totals: { transcriptions: stats.transcriptions, syntheses: stats.syntheses, failures: stats.failures, last_at: epoch(stats.lastAt) },
      usage: {
        since: epoch(m.usage.since),
        rows: m.usage.usage().map(usageView),
        phones_may_read: this.config.providerUsageEnabled,
      },
      security: this.securityState(),
    };
  }

  /** A section's relay-wide switch; RELAY_REALTIME_VOICE_ENABLED=1 keeps the realtime ones on (409 to turn one off then). */
  @Post('/sections/:section')
  @Auth('operator')
  @HttpCode(200)
  async setEnabled(@Param() p: VoiceSectionParam, @Body() body: VoiceSwitchDto): Promise<VoiceSwitchAnswer> {
    const before = this.section(p.section);
    if (before.forced_by_env && !body.enabled)
      throw new DomainError(
        'voice.switch_forced_by_env',
        'conflict',
        `RELAY_REALTIME_VOICE_ENABLED=1 keeps ${KINDS[kindOfSection(p.section)].title} on: unset it and restart the relay to turn it off`,
      );
    await this.settings.patch(p.section, { enabled: body.enabled } as SettingsPatch, ['enabled'], OPERATOR);
    const after = this.section(p.section);
    return { ok: true, section: p.section, enabled: after.enabled, changed: after.enabled !== before.enabled };
  }

  @Post('/security')
  @Auth('operator')
  @HttpCode(200)
  async setSecurity(@Body() body: VoiceSecurityDto): Promise<VoiceSecurityAnswer> {
    await this.security.change({ allow_insecure_api_bearer: body.allow_insecure_api_bearer }, ['allow_insecure_api_bearer']);
    return { ok: true, ...this.securityState() };
  }

  private held(): VoiceView['held'] {
    const h = this.sessions.heldSummary();
    return { sessions: h.sessions, bytes: h.bytes, max_bytes: h.maxBytes, grace_seconds: this.config.voice.resumeGraceSeconds };
  }

  private unavailability(): Map<string, string | null> {
    return new Map(this.providers.all().map((p) => [p.id, p.unavailable()]));
  }

  private section(section: VoiceSection, unavailable = this.unavailability()): VoiceSectionRow {
    const s = this.settings.settings(section, null);
    const id = this.providers.idOf(s.provider);
    const why =
      id === null
        ? `provider "${String(s.provider)}" is not one of this relay's (${this.providers.ids().join(', ')})`
        : (unavailable.get(id) ?? null);
    return {
      section,
      title: TITLE[section],
      enabled: this.settings.enabledIn(section, s),
      forced_by_env: section !== 'voice_output' && this.config.realtimeVoiceEnabled,
      provider: id ?? String(s.provider),
      provider_known: id !== null,
      available: why === null,
      unavailable_reason: why,
      model: String(s.model),
      voice: String(s.voice),
      sample_rate: typeof s.sample_rate === 'number' ? s.sample_rate : null,
    };
  }

  /** What `/voice/synthesize` and `/voice/transcribe` use: the global config's `tts:` and `stt:`, as GET /voice/config says. */
  private callsDefault(): { synthesize: VoiceCallDefault; transcribe: VoiceCallDefault } {
    const c = this.voice.config_(undefined);
    const r: { tts_reason?: string; stt_reason?: string } = c.requirements;
    return {
      synthesize: { provider: String(c.tts.provider), available: c.requirements.tts_available, unavailable_reason: r.tts_reason ?? null },
      transcribe: { provider: String(c.stt.provider), available: c.requirements.stt_available, unavailable_reason: r.stt_reason ?? null },
    };
  }

  private securityState() {
    const s = this.security.state();
    return {
      allow_insecure_api_bearer: s.allow_insecure_api_bearer,
      api_key_configured: s.api_key_configured,
      tls: s.tls,
      trust_proxy_headers: s.trust_proxy_headers,
    };
  }
}
