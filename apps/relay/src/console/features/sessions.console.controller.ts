import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import type { EndDeviceTrustAnswer, EndTrustAnswer, RenewalWithoutSessionRow, RevokeAnswer, SessionsView, ShortenAnswer } from '@svc/console-api';
import { actorOf, endDeviceTrust, epoch, type Principal, type ReadModels } from '@svc/domain';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import type { RelayConfig } from '../../common/config/relay-config';
import { CommandLoop } from '../../common/loop/command-loop';
import { RELAY_CONFIG } from '../../common/auth/tokens';
import { SessionsService } from '../../sessions/sessions.service';
import { ConsoleFeatures } from '../console-features';
import { ConsoleEndDeviceTrustDto, ConsoleShortenDto } from './console.dto';
import { PersonalDataService } from '../../personal/personal-data.service';
import { RevokeDto } from '../../personal/personal-data.dto';

const OPERATOR: Principal = { kind: 'operator' };

/**
 * Devices page: every live session, plus revoke, shorten and end-trust through SessionsService; and the
 * renewals of devices whose session expired (they come back with their refresh token unless ended here).
 */
@Controller('/console/api/sessions')
export class SessionsConsoleController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly personal: PersonalDataService,
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    features.add({ id: 'sessions', title: 'Devices', order: 10 });
  }

  @Get()
  @Auth('operator')
  list(): SessionsView {
    const m = this.loop.models;
    const now = this.clock.now();
    const conns = m.connections.all();
    const sessions = this.sessions.list(OPERATOR).map(({ is_current: _, ...s }) => {
      const mine = conns.filter((c) => c.tokenPrefix === s.token_prefix);
      return {
        ...s,
        transport: transportLabel(this.config.tls !== null, s.transport_hint),
        connections: mine.map((c) => ({ ip: c.ip, path: c.path, since: epoch(c.since) })),
        offline_since: epoch(m.connections.offlineSince(s.token_prefix)),
      };
    });
    return { ok: true, server_time: epoch(now), sessions, renewals_without_session: renewalsWithoutSession(m, now) };
  }

  /** Ends the renewal of a device that has no live session (one with a session: `/:prefix/end-trust`). */
  @Post('/end-device-trust')
  @Auth('operator')
  @HttpCode(200)
  async endDeviceTrust(@Body() body: ConsoleEndDeviceTrustDto): Promise<EndDeviceTrustAnswer> {
    const [e] = await this.loop.run(actorOf(OPERATOR), (m, now) => endDeviceTrust(m, body.device_id, OPERATOR, now));
    return { ok: true, device_id: e.data.deviceId, trust_ended: true };
  }

  @Post('/:prefix/revoke')
  @Auth('operator')
  @HttpCode(200)
  async revoke(@Param('prefix') prefix: string, @Body() body: RevokeDto): Promise<RevokeAnswer> {
    const answer = await this.sessions.revoke(prefix, OPERATOR);
    if (!body?.forget) return answer;
    // The revoked session's full prefix: a shorter one typed here could match other devices' keys too.
    const forgotten = await this.personal.forget('operator', { scope: 'revoked', device: answer.revoked, before: null });
    return { ...answer, forgotten_keys: forgotten.keys };
  }

  @Post('/:prefix/end-trust')
  @Auth('operator')
  @HttpCode(200)
  endTrust(@Param('prefix') prefix: string): Promise<EndTrustAnswer> {
    return this.sessions.endTrust(prefix, OPERATOR);
  }

  @Post('/:prefix/shorten')
  @Auth('operator')
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

/** Live renewals whose device holds no live session: it renews on its next connect unless ended. */
export function renewalsWithoutSession(m: ReadModels, now: Date): RenewalWithoutSessionRow[] {
  const withSession = new Set(m.sessions.active(now).map((s) => s.deviceId));
  return m.trust
    .all()
    .filter((t) => t.expiresAt > now.getTime() && !withSession.has(t.deviceId))
    .sort((a, b) => b.issuedAt - a.issuedAt)
    .map((t) => ({
      device_id: t.deviceId,
      token_prefix: t.tokenPrefix,
      issued_at: epoch(t.issuedAt),
      expires_at: epoch(t.expiresAt),
      renewals: t.renewals,
      last_renewed_at: epoch(t.lastRenewedAt),
      adopted: t.reason === 'adopted',
    }));
}
