import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { epoch, type Session } from '@svc/domain';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/clock';
import { CommandLoop } from '../common/command-loop';
import { Secrets } from '../common/secrets';
import { LOGGER, RUNTIME, type Runtime } from '../common/tokens';
import { AuthOkFields } from '../phone-socket/auth-ok-fields';
import { newToken, tokenSha256 } from './protocol';

/**
 * `route_credential` (spec 4.11): a phone that came through Secure Link while Reach is connected gets, in
 * its `auth.ok`, a route token for the broker (published as its digest first), so it can come back that
 * way when the direct routes fail. The route dies with its session.
 */
@Injectable()
export class ReachRouteCredentials implements OnModuleInit, OnModuleDestroy {
  /** Route credentials handed out, by credential id (a token is reused while it lives). */
  private readonly routes = new Map<string, { token: string; expiresAt: number }>();
  private sub: Subscription | null = null;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    authOk: AuthOkFields,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    authOk.add(({ conn, session, sessionToken }) => (conn.viaSecureLink ? this.forSession(session, sessionToken) : {}));
  }

  onModuleInit(): void {
    // Best effort: the broker also lets a route expire.
    this.sub = this.loop.bus.ofType('session.revoked', 'session.expired').subscribe((e) => {
      const credentialId = this.credentialId(e.data.tokenPrefix);
      if (this.routes.delete(credentialId)) this.runtime.reach?.revokeRoute(credentialId).catch(() => undefined);
    });
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
  }

  private credentialId(tokenPrefix: string): string {
    return this.secrets.mac('reach-route', tokenPrefix).slice(0, 22);
  }

  /** `expires_at` is whole seconds (the app reads a long). Nothing when Reach is not connected or the broker refused. */
  private async forSession(session: Session, sessionToken: string): Promise<{ route_credential?: Record<string, unknown> }> {
    const reach = this.runtime.reach;
    if (!reach?.connected) return {};
    const credentialId = this.credentialId(session.tokenPrefix);
    const now = epoch(this.clock.now());
    const expiresAt = session.expiresAt ? epoch(session.expiresAt) : now + 30 * 86_400;
    let cached = this.routes.get(credentialId);
    if (!cached || cached.expiresAt <= now) {
      cached = { token: newToken(), expiresAt };
      try {
        await reach.publishRoute(credentialId, cached.token, expiresAt, tokenSha256(session.deviceId || sessionToken));
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'Reach route credential not published');
        return {};
      }
      this.routes.set(credentialId, cached);
    }
    return {
      route_credential: {
        kind: 'broker_route',
        broker_url: reach.connectUrl,
        host_id: reach.hostId,
        credential_id: credentialId,
        token: cached.token,
        expires_at: cached.expiresAt,
      },
    };
  }
}
