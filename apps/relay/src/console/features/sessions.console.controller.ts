import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import type { EndTrustAnswer, RevokeAnswer, SessionsView, ShortenAnswer } from '@svc/console-api';
import type { Principal } from '@svc/domain';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import type { RelayConfig } from '../../common/config';
import { CommandLoop } from '../../common/command-loop';
import { RELAY_CONFIG } from '../../common/tokens';
import { SessionsService } from '../../sessions/sessions.service';
import { ConsoleFeatures } from '../console-features';
import { ConsoleShortenDto } from './console.dto';

const OPERATOR: Principal = { kind: 'operator' };

/** Devices page: every live session, plus revoke and shorten through SessionsService. */
@Controller('/console/api/sessions')
export class SessionsConsoleController {
  constructor(
    private readonly sessions: SessionsService,
    features: ConsoleFeatures,
    private readonly log: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    features.add({ id: 'sessions', title: 'Devices', order: 10 });
  }

  @Get()
  @Auth('loopback')
  list(): SessionsView {
    const conns = this.log.models.connections.all();
    const sessions = this.sessions.list(OPERATOR).map(({ is_current: _, ...s }) => {
      const mine = conns.filter((c) => c.tokenPrefix === s.token_prefix);
      return {
        ...s,
        transport: transportLabel(this.config.tls !== null, s.transport_hint),
        connections: mine.map((c) => ({ ip: c.ip, path: c.path, since: Math.floor(c.since / 1000) })),
      };
    });
    return { ok: true, server_time: Math.floor(this.clock.now().getTime() / 1000), sessions };
  }

  @Post('/:prefix/revoke')
  @Auth('loopback')
  @HttpCode(200)
  revoke(@Param('prefix') prefix: string): Promise<RevokeAnswer> {
    return this.sessions.revoke(prefix, OPERATOR);
  }

  @Post('/:prefix/end-trust')
  @Auth('loopback')
  @HttpCode(200)
  endTrust(@Param('prefix') prefix: string): Promise<EndTrustAnswer> {
    return this.sessions.endTrust(prefix, OPERATOR);
  }

  @Post('/:prefix/shorten')
  @Auth('loopback')
  @HttpCode(200)
  shorten(@Param('prefix') prefix: string, @Body() body: ConsoleShortenDto): Promise<ShortenAnswer> {
    return this.sessions.shorten(prefix, OPERATOR, body);
  }
}

/** The spec's transport security labels (2.2). */
export function transportLabel(tls: boolean, hint: string | null): string {
  if (tls) return 'Secure (TLS)';
  return hint ? `Plain (on ${hint})` : 'Plain (no TLS)';
}
