import { Controller, Get, Inject, Query } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import { Auth } from '../common/auth/auth';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { VoiceService } from '../voice/voice.service';
import { providerUsageView } from './provider-usage-view';
import { UsageQuery } from './usage.dto';

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
    private readonly loop: CommandLoop,
    private readonly voice: VoiceService,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  @Get('/providers')
  @Auth('operator-or-paired')
  providers(@Query() q: UsageQuery) {
    if (!this.config.providerUsageEnabled)
      throw new DomainError(
        'usage.disabled',
        'not_found',
        'provider usage is off on this relay: the operator enables it with RELAY_PROVIDER_USAGE_ENABLED=1',
      );
    const profile = q.profile ?? null;
    const sessionId = q.session_id ?? null;
    return providerUsageView(this.loop.models, this.voice.providerStates(), { profile, sessionId });
  }
}
