import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { epoch, type Session } from '@svc/domain';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { Secrets } from '../common/auth/secrets';
import { LOGGER, RUNTIME, type Runtime } from '../common/auth/tokens';
import { AuthOkFields } from '../phone-socket/auth-ok-fields';
import { newToken, tokenSha256 } from './protocol';

/** A route for a session without a trusted device (renewal off, or no device id) when the session never expires. */
const UNBOUNDED_ROUTE_SECONDS = 30 * 86_400;

/**
 * `route_credential` (spec 4.11): a phone that came through Secure Link while Reach is connected gets, in
 * its `auth.ok`, a route token for the broker (published as its digest first), so it can come back that
 * way when the direct routes fail.
 *
 * A trusted device's route belongs to its trust, not to a session: it lives as long as the trust (the
 * refresh token's lifetime), keeps its id across renewals and ends with the trust (revoked, replaced by a
 * new pairing, expired, reused). Bound to the session, it died with it: a phone whose session expired could
 * not come back through the broker to renew, and a renewal through the broker replaced the session whose
 * route carried it. A session without a trust keeps a route bound to the session, which dies with it.
 */
@Injectable()
export class ReachRouteCredentials implements OnModuleInit, OnModuleDestroy {
  /** Route credentials handed out, by credential id (a token is reused while it lives). */
  private readonly routes = new Map<string, { token: string; expiresAt: number }>();
  private readonly subs: Subscription[] = [];

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
    // A trust's route is revoked whether or not this process handed it out (its id is derived): a relay
    // restarted since still ends it. The broker also lets a route expire.
    this.subs.push(this.loop.bus.ofType('trust.ended').subscribe((e) => this.revoke(this.trustRoute(e.data.trustId), true)));
    this.subs.push(
      this.loop.bus.ofType('session.revoked', 'session.expired').subscribe((e) => this.revoke(this.sessionRoute(e.data.tokenPrefix), false)),
    );
  }

  onModuleDestroy(): void {
    for (const s of this.subs) s.unsubscribe();
  }

  private revoke(credentialId: string, always: boolean): void {
    if (!this.routes.delete(credentialId) && !always) return;
    this.runtime.reach
      ?.revokeRoute(credentialId)
      .catch((err: Error) => this.logger.info({ err: err.message }, 'Reach route revoke not acknowledged yet'));
  }

  private trustRoute(trustId: string): string {
    return this.secrets.mac('reach-route-trust', trustId).slice(0, 22);
  }

  private sessionRoute(tokenPrefix: string): string {
    return this.secrets.mac('reach-route', tokenPrefix).slice(0, 22);
  }

  /** `expires_at` is whole seconds (the app reads a long). Nothing when Reach is not connected or the broker refused. */
  private async forSession(session: Session, sessionToken: string): Promise<{ route_credential?: Record<string, unknown> }> {
    const reach = this.runtime.reach;
    if (!reach?.connected) return {};
    const trust = session.deviceId === '' ? undefined : this.loop.models.trust.forDevice(session.deviceId);
    const now = epoch(this.clock.now());
    const credentialId = trust ? this.trustRoute(trust.trustId) : this.sessionRoute(session.tokenPrefix);
    const expiresAt = trust ? epoch(trust.expiresAt) : session.expiresAt ? epoch(session.expiresAt) : now + UNBOUNDED_ROUTE_SECONDS;
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
