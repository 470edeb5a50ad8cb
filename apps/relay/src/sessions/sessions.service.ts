import { Injectable } from '@nestjs/common';
import {
  epoch,
  actorOf,
  DomainError,
  endTrust,
  expireSessions,
  expireTrusts,
  findByPrefix,
  revokeSession,
  shortenSession,
  type Principal,
  type Session,
  type ShortenInput,
  wireLiveGrants,
} from '@svc/domain';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { Scheduler } from '../common/loop/scheduler';

/** The wire view of one session (WIRE.md); never more of the token than its 8-character prefix. */
export type SessionView = ReturnType<SessionsService['view']>;

@Injectable()
export class SessionsService {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
  ) {
    scheduler.register('sessions.expire', (m, now) => expireSessions(m, now));
    scheduler.register('trust.expire', (m, now) => expireTrusts(m, now));
  }

  list(caller: Principal) {
    // One clock read and one pass over the open sockets per request, not per session (docs/BENCHMARKS.md).
    const now = this.clock.now();
    const online = new Set(this.loop.models.connections.all().map((c) => c.tokenPrefix));
    return this.loop.models.sessions
      .active(now)
      .toSorted((a, b) => b.lastSeen - a.lastSeen)
      .map((s) => this.view(s, caller, now, online));
  }

  view(s: Session, caller: Principal, now = this.clock.now(), online?: ReadonlySet<string>) {
    const grants = wireLiveGrants(s, now);
    return {
      token_prefix: s.tokenPrefix,
      device_name: s.deviceName,
      device_id: s.deviceId,
      device_model: s.deviceModel,
      device_platform: s.devicePlatform,
      device_hostname: s.deviceHostname,
      client_surface: s.clientSurface ?? 'unknown',
      device_form_factor: s.deviceFormFactor ?? 'unknown',
      created_at: epoch(s.createdAt),
      first_seen: epoch(s.createdAt),
      last_seen: epoch(s.lastSeen),
      expires_at: epoch(s.expiresAt),
      grants,
      transport_hint: s.transportHint,
      trusted_device: this.trustView(s.deviceId),
      online: online ? online.has(s.tokenPrefix) : this.loop.models.connections.isOnline(s.tokenPrefix),
      is_current: caller.kind === 'device' && caller.tokenPrefix === s.tokenPrefix,
    };
  }

  /** The device's renewal as a person reads it: never its refresh token or the token's digest. */
  trustView(deviceId: string) {
    const t = deviceId === '' ? undefined : this.loop.models.trust.forDevice(deviceId);
    if (!t) return null;
    return {
      issued_at: epoch(t.issuedAt),
      expires_at: epoch(t.expiresAt),
      renewals: t.renewals,
      last_renewed_at: t.lastRenewedAt === null ? null : epoch(t.lastRenewedAt),
      adopted: t.reason === 'adopted',
    };
  }

  /** Ends a device's trusted-device renewal; its live session stays. */
  async endTrust(prefix: string, caller: Principal) {
    const [e] = await this.loop.run(actorOf(caller), (m, now) => endTrust(m, prefix, caller, now));
    return { ok: true as const, device_id: e.data.deviceId, trust_ended: true };
  }

  async revoke(prefix: string, caller: Principal) {
    const stored = await this.loop.run(actorOf(caller), (m, now) => revokeSession(m, prefix, caller, now));
    const e = stored.find((x) => x.type === 'session.revoked')!;
    return { ok: true as const, revoked: e.data.tokenPrefix, revoked_self: e.data.self };
  }

  async shorten(prefix: string, caller: Principal, input: ShortenInput) {
    let target = '';
    const [e] = await this.loop.run(actorOf(caller), (m, now) => {
      target = findByPrefix(m, prefix, now).tokenPrefix;
      return shortenSession(m, prefix, caller, input, now);
    });
    // No event: the request changed nothing, and the answer is the session as it stands.
    const s = this.loop.models.sessions.byTokenPrefix(e ? e.data.tokenPrefix : target);
    if (!s) throw new DomainError('sessions.not_found', 'not_found', 'no live session matches that prefix');
    const v = this.view(s, caller);
    return { ok: true as const, token_prefix: v.token_prefix, expires_at: v.expires_at, grants: v.grants };
  }
}
