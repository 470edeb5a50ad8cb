import { Inject, Injectable } from '@nestjs/common';
import {
  epoch,
  abandonRenewal,
  abandonSession,
  reconnectTrust,
  renewTrust,
  consumeCode,
  DomainError,
  INVALID_CREDENTIALS,
  liveGrants,
  normalizeCode,
  recordAuthFailure,
  assertNotBlocked,
  updateDevice,
  type Session,
} from '@svc/domain';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Clock } from '../common/clock';
import { CommandLoop } from '../common/command-loop';
import type { RelayConfig } from '../common/config';
import { newSessionToken, Secrets, tokenPrefix } from '../common/secrets';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import { clientSupports, deviceInfo, pairingChoices, refreshTokenOf, sentDeviceFields } from './auth-frame';
import { AuthOkFields } from './auth-ok-fields';
import type { Envelope } from './envelope';
import type { PhoneConnection } from './phone-connection';

type Renewal = { trustId: string; previousDigest: string; previousPrefix: string };

/**
 * The first frame of a phone socket, `system/auth`: a session token (with the trusted device's refresh
 * token beside it), a refresh token alone (a trusted device renewing an ended session), or a pairing
 * code. Answers `auth.ok` with the session token, or `auth.fail` and closes.
 */
@Injectable()
export class AuthHandshake {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    private readonly extras: AuthOkFields,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** `admitted` runs once the socket holds its principal, before `phone.connected` is written. */
  async authenticate(conn: PhoneConnection, env: Envelope, admitted: () => void): Promise<void> {
    const p = env.payload;
    const now = this.clock.now();
    try {
      assertNotBlocked(this.loop.models.rateLimit, conn.ip, now);
    } catch {
      return conn.failAuth('too many failed attempts from this address');
    }
    const supports = clientSupports(p);
    if (typeof supports === 'string') return conn.failAuth(supports);
    const sentRefresh = refreshTokenOf(p);
    if (typeof sentRefresh === 'string') return conn.failAuth(sentRefresh);
    // The app sends its refresh token beside its stored session token on every reconnect (AuthManager.kt).
    const refresh = sentRefresh.token;
    const refreshDigest = refresh !== null && refresh.length <= 512 ? this.secrets.digest(refresh) : null;
    const policy = this.trustPolicy();
    let session: Session | undefined;
    let token = '';
    let paired = false;
    /** The refresh token this auth.ok hands out, if one was issued or rotated. */
    let issued: string | null = null;
    let renewal: Renewal | null = null;
    const hasToken = typeof p.session_token === 'string' && p.session_token.length > 0;
    if (hasToken) {
      token = p.session_token as string;
      session = token.length <= 512 ? this.loop.models.sessions.byToken(this.secrets.digest(token), now) : undefined;
    }
    if (session) {
      // The reconnecting client may describe itself anew (renamed, updated): keep what it says now.
      const device = deviceInfo(p);
      if (typeof device === 'string') return conn.failAuth(device);
      const prefix = session.tokenPrefix;
      const sent = sentDeviceFields(p, device);
      const fresh = this.freshRefresh();
      const live = session;
      const stored = await this.loop.run(`device:${prefix}`, (m, t) => [
        ...updateDevice(m, prefix, sent),
        ...reconnectTrust(m, live, { sentDigest: refreshDigest, issue: fresh.issue, ip: conn.ip }, policy, t),
      ]);
      if (stored.some((e) => e.type === 'trust.reuse_detected')) return this.refuseReuse(conn);
      if (stored.some((e) => e.type === 'trust.issued')) issued = fresh.token;
      session = this.loop.models.sessions.byTokenPrefix(prefix) ?? session;
    } else if (refreshDigest !== null) {
      // The session ended (or is unknown): a trusted device renews it with its refresh token.
      const device = deviceInfo(p);
      if (typeof device === 'string') return conn.failAuth(device);
      const fresh = this.freshRefresh();
      const minted = this.newToken();
      token = minted.token;
      const prefix = minted.prefix;
      const before = this.loop.models.trust.byRefreshDigest(refreshDigest);
      const stored = await this.loop.run(`public:${conn.ip}`, (m, t) =>
        renewTrust(
          m,
          {
            refreshDigest,
            next: fresh.issue,
            tokenDigest: this.secrets.digest(token),
            tokenPrefix: prefix,
            device,
            ip: conn.ip,
            transport: this.config.tls ? 'wss' : 'ws',
          },
          policy,
          t,
        ),
      );
      if (stored.some((e) => e.type === 'trust.reuse_detected')) {
        await this.countFailure(conn, 'refresh token reused after rotation');
        return this.refuseReuse(conn);
      }
      const refused = stored.find((e) => e.type === 'trust.refused');
      if (refused) return this.recordFailure(conn, 'token', `refresh token refused: ${(refused.data as { reason: string }).reason}`);
      if (!stored.some((e) => e.type === 'session.created') || !before) return this.recordFailure(conn, 'token', 'unknown refresh token');
      session = this.loop.models.sessions.byTokenPrefix(prefix)!;
      issued = fresh.token;
      renewal = { trustId: before.trustId, previousDigest: refreshDigest, previousPrefix: before.tokenPrefix };
    } else if (hasToken) {
      return this.recordFailure(conn, 'token', 'unknown, revoked or expired session token');
    } else if (p.pairing_code !== undefined) {
      const code = normalizeCode(p.pairing_code);
      if (!code) return this.recordFailure(conn, 'code', 'malformed pairing code');
      const device = deviceInfo(p);
      if (typeof device === 'string') return conn.failAuth(device);
      const choices = pairingChoices(p);
      if (typeof choices === 'string') return conn.failAuth(choices);
      const fresh = this.freshRefresh();
      const minted = this.newToken();
      token = minted.token;
      const prefix = minted.prefix;
      let stored;
      try {
        stored = await this.loop.run(`public:${conn.ip}`, (m, t) =>
          consumeCode(
            m,
            {
              codeDigest: this.secrets.digest(code),
              tokenDigest: this.secrets.digest(token),
              tokenPrefix: prefix,
              device,
              ip: conn.ip,
              choices,
              transport: this.config.tls ? 'wss' : 'ws',
              trust: { issue: fresh.issue, policy },
            },
            t,
          ),
        );
      } catch (err) {
        if (err instanceof DomainError && err.code === 'auth.pending_approval') return conn.failAuth(err.message, 'pending_approval');
        if (err instanceof DomainError && err.kind === 'unauthorized')
          return this.recordFailure(conn, 'code', 'unknown, used or expired pairing code');
        throw err;
      }
      if (stored.some((e) => e.type === 'trust.issued')) issued = fresh.token;
      session = this.loop.models.sessions.byTokenPrefix(prefix)!;
      paired = true;
    } else {
      return conn.failAuth('system/auth needs pairing_code or session_token');
    }
    const abandon = () => (renewal ? this.abandonRenewal(renewal, session.tokenPrefix) : this.abandon(paired, session.tokenPrefix));
    if (conn.closed) return abandon();
    conn.principal = { kind: 'device', tokenPrefix: session.tokenPrefix, deviceId: session.deviceId, deviceName: session.deviceName };
    conn.supports = supports;
    admitted();
    // An authenticated socket no longer needs its deadline (nor the closure it holds for 30 s).
    clearTimeout(conn.authTimer);
    conn.authTimer = undefined;
    await this.loop.record(`device:${session.tokenPrefix}`, [
      {
        type: 'phone.connected',
        data: {
          connId: conn.id,
          tokenPrefix: session.tokenPrefix,
          deviceId: session.deviceId,
          ip: conn.ip,
          path: conn.path,
          ...(Object.keys(supports).length > 0 ? { supports } : {}),
        },
      },
    ]);
    const grants: Record<string, number | null> = {};
    for (const [ch, until] of Object.entries(liveGrants(session, this.clock.now()))) grants[ch] = epoch(until);
    const trust = issued !== null ? this.loop.models.trust.forDevice(session.deviceId) : undefined;
    const delivered = conn.send(
      'system',
      'auth.ok',
      {
        session_token: token,
        token_prefix: session.tokenPrefix,
        server_version: this.runtime.version,
        expires_at: epoch(session.expiresAt),
        grants,
        transport_hint: session.transportHint,
        client_surface: session.clientSurface ?? 'unknown',
        device_form_factor: session.deviceFormFactor ?? 'unknown',
        // The profile catalog's rows; a Reach route credential for a phone that came through Secure Link.
        ...(await this.extras.for({ conn, session, sessionToken: token })),
        // The app stores a rotated refresh token from auth.ok (AuthManager.kt handleAuthOk) and sends it back.
        ...(issued !== null && trust ? { refresh_token: issued, refresh_expires_at: epoch(trust.expiresAt) } : {}),
      },
      env.id,
    );
    if (!delivered) await abandon();
  }

  /** A new session token whose 8-character prefix no live session has. */
  private newToken(): { token: string; prefix: string } {
    for (;;) {
      const token = newSessionToken();
      const prefix = tokenPrefix(token);
      if (!this.loop.models.sessions.byTokenPrefix(prefix)) return { token, prefix };
    }
  }

  private trustPolicy() {
    return { ttlMs: this.config.refreshTtlDays * 86_400_000 };
  }

  /** A refresh token the auth may hand out: its id and digest go to the log, the token only to the phone. */
  private freshRefresh(): { token: string; issue: { trustId: string; refreshDigest: string } } {
    const token = newSessionToken();
    return { token, issue: { trustId: randomUUID(), refreshDigest: this.secrets.digest(token) } };
  }

  /** A rotated-out refresh token came back: the events ended the trust and its sessions; tell the phone why. */
  private refuseReuse(conn: PhoneConnection): void {
    conn.failAuth('this device was signed out: its refresh token was used after it had been replaced (a copy?); pair it again', 'refresh_reuse');
  }

  /** A failed credential for the rate limiter, without closing (the caller answers). */
  private async countFailure(conn: PhoneConnection, reason: string): Promise<void> {
    await this.loop.run(`public:${conn.ip}`, (m, now) => recordAuthFailure(m.rateLimit, { ip: conn.ip, kind: 'token', via: 'ws', reason }, now));
  }

  /** The socket closed before a renewal's auth.ok went out: the new session goes, the old refresh token stays current. */
  private async abandonRenewal(r: Renewal, newPrefix: string): Promise<void> {
    this.logger.info({ tokenPrefix: newPrefix }, 'phone left before receiving its renewed session: the renewal is undone');
    await this.loop.run('system', (m) => abandonRenewal(m, { ...r, newPrefix }));
  }

  /**
   * The socket closed before `auth.ok` (and so the token) reached the phone. A session this pairing just
   * made is held by nobody: revoke it, so it is neither listed nor left for an attacker to guess at.
   */
  private async abandon(paired: boolean, tokenPrefix: string): Promise<void> {
    if (!paired) return;
    this.logger.info({ tokenPrefix }, 'phone left before receiving its token: the new session is revoked');
    await this.loop.run('system', (m) => abandonSession(m, tokenPrefix));
  }

  private async recordFailure(conn: PhoneConnection, kind: 'code' | 'token', reason: string): Promise<void> {
    await this.loop.run(`public:${conn.ip}`, (m, now) => recordAuthFailure(m.rateLimit, { ip: conn.ip, kind, via: 'ws', reason }, now));
    conn.failAuth(INVALID_CREDENTIALS);
  }
}
