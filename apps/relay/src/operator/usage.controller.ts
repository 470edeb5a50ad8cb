import { Controller, Get, Inject, Query } from '@nestjs/common';
import { DomainError, type ProviderUsage } from '@svc/domain';
import { Auth } from '../common/auth';
import { CommandLoop } from '../common/command-loop';
import type { RelayConfig } from '../common/config';
import { RELAY_CONFIG } from '../common/tokens';
import { VoiceService } from '../voice/voice.service';
import { UsageQuery } from './usage.dto';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * `GET /usage/providers` (spec 4.8): what this relay asked of each provider on the user's behalf, from
 * its own log (speech to text, text to speech, streaming and realtime sessions): calls, failures,
 * characters and audio, per profile, optionally scoped to one profile or one chat session. Off unless
 * RELAY_PROVIDER_USAGE_ENABLED=1 (404 then, naming the variable). It lists whether each provider can
 * serve and why not, never a credential; the agent's own model usage is the agent's to report.
 */
@Controller('/usage')
export class UsageController {
  constructor(
    private readonly log: CommandLoop,
    private readonly voice: VoiceService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  @Get('/providers')
  @Auth('loopback-or-paired')
  providers(@Query() q: UsageQuery) {
    if (!this.config.providerUsageEnabled)
      throw new DomainError(
        'usage.disabled',
        'not_found',
        'provider usage is off on this relay: the operator enables it with RELAY_PROVIDER_USAGE_ENABLED=1',
      );
    const profile = q.profile ?? null;
    const sessionId = q.session_id ?? null;
    const rows = this.log.models.usage.usage({ profile, chatSessionId: sessionId });
    const states = new Map(this.voice.providerStates().map((s) => [s.provider, s.unavailable]));
    const providers = [...new Set([...states.keys(), ...rows.map((r) => r.provider)])].sort();
    return {
      ok: true,
      scope: { profile, session_id: sessionId },
      source: 'relay_event_log',
      since: this.log.models.usage.since === null ? null : iso(this.log.models.usage.since),
      providers: providers.map((provider) => {
        const mine = rows.filter((r) => r.provider === provider);
        const why = states.has(provider) ? states.get(provider)! : 'not configured in this relay';
        return {
          provider,
          kind: 'speech',
          available: why === null,
          ...(why ? { unavailable_reason: why } : {}),
          totals: total(mine),
          by_profile: mine.map((r) => ({ profile: r.profile ?? 'default', ...view(r) })),
        };
      }),
    };
  }
}

function view(r: ProviderUsage) {
  return {
    transcriptions: r.transcriptions,
    syntheses: r.syntheses,
    sessions: r.sessions,
    failures: r.failures,
    characters: r.characters,
    audio_bytes: r.audioBytes,
    audio_seconds: Math.round(r.audioMs / 100) / 10,
    first_used_at: iso(r.firstUsedAt),
    last_used_at: iso(r.lastUsedAt),
  };
}

function total(rows: ProviderUsage[]) {
  const sum = (f: (r: ProviderUsage) => number) => rows.reduce((n, r) => n + f(r), 0);
  return {
    transcriptions: sum((r) => r.transcriptions),
    syntheses: sum((r) => r.syntheses),
    sessions: sum((r) => r.sessions),
    failures: sum((r) => r.failures),
    characters: sum((r) => r.characters),
    audio_bytes: sum((r) => r.audioBytes),
    audio_seconds: Math.round(sum((r) => r.audioMs) / 100) / 10,
    last_used_at: rows.length ? iso(Math.max(...rows.map((r) => r.lastUsedAt))) : null,
  };
}
