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
  isLive,
  wireLiveGrants,
  normalizeCode,
  recordAuthFailure,
  assertNotBlocked,
  updateDevice,
  type Session,
} from '@svc/domain';
import type { ClientSupports, NewEvent, PhoneConnected, RelayEvent } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { newSessionToken, Secrets, tokenPrefix } from '../common/auth/secrets';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { clientSupports, deviceInfo, pairingChoices, refreshTokenOf, sentDeviceFields } from './auth-frame';
import { AuthOkFields } from './auth-ok-fields';
import { refuseAuth } from './auth-refusal';
import type { Envelope } from './envelope';
import type { PhoneConnection } from './phone-connection';

type Renewal = { trustId: string; previousDigest: string; previousPrefix: string; previousTokenDigest: string | null };

/**
 * What a credential was granted: the session the socket joins (its `phone.connected` already written in the
 * same batch), the token and refresh token its `auth.ok` carries, and how to undo a session made for it
 * that nobody would hold if `auth.ok` never leaves.
 */
type Granted = { prefix: string; deviceId: string; token: string; issued: string | null; undo: () => Promise<void>; renewed: boolean };

/** Resolves once the socket's `auth.ok` is written (whether it went or not), at once when none is sent. */
type Answer = { written: Promise<void> };

/** The close a socket saw while its handshake was being written (the hub records none for a socket without a principal). */
type SeenClose = { code: number; reason: string } | null;

/**
 * The first frame of a phone socket, `system/auth`: a session token (with the trusted device's refresh
 * token beside it), a refresh token beside an ended session's token (a trusted device renewing it), or a
 * pairing code. Answers `auth.ok` with the session token, or `auth.fail` and closes: every refusal, a racing
 * renewal and a full disk included, is an `auth.fail` with its code, never a socket left unanswered.
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

  /**
   * `admitted` runs once the socket holds its principal, after its `phone.connected` is durable. A socket that
   * came over a Reach route holds that route's revoke until its answer is written: a pairing over the route
   * whose trust it replaces (or a session-bound route's session it replaces) would otherwise have the broker
   * close the very stream carrying its `auth.ok`, and the pairing be abandoned.
   */
  async authenticate(conn: PhoneConnection, env: Envelope, admitted: () => void): Promise<void> {
    let seen: SeenClose = null;
    const onClose = (code: number, reason: Buffer) => (seen = { code, reason: reason.toString() });
    conn.ws.once('close', onClose);
    const release = this.runtime.reach?.holdRevoke(conn.ip) ?? null;
    const answer: Answer = { written: Promise.resolve() };
    try {
      await this.handshake(conn, env, admitted, () => seen, answer);
    } catch (err) {
      refuseAuth(conn, err, this.logger);
    } finally {
      conn.ws.off('close', onClose);
      if (release) void answer.written.finally(release);
    }
  }

  private async handshake(conn: PhoneConnection, env: Envelope, admitted: () => void, seen: () => SeenClose, answer: Answer): Promise<void> {
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
    const hasToken = typeof p.session_token === 'string' && p.session_token.length > 0;
    const token = hasToken ? (p.session_token as string) : '';
    const tokenDigest = hasToken && token.length <= 512 ? this.secrets.digest(token) : null;
    const live = tokenDigest !== null ? this.loop.models.sessions.byToken(tokenDigest, now) : undefined;
    let granted: Granted | undefined;
    if (live) granted = await this.resume(conn, p, live, token, refreshDigest, supports);
    // The session ended (or is unknown): a trusted device renews it with its refresh token and that session's token.
    else if (refreshDigest !== null) granted = await this.renew(conn, p, refreshDigest, tokenDigest, supports);
    else if (hasToken) return this.recordFailure(conn, 'token', 'unknown, revoked or expired session token');
    else if (p.pairing_code !== undefined) granted = await this.pair(conn, p, supports);
    else return conn.failAuth('system/auth needs pairing_code or session_token');
    if (granted) await this.admit(conn, env, granted, supports, admitted, seen, answer);
  }

  /** A live session's reconnect: its bookkeeping (the device's new description, trust adoption) and the connect, in one batch. */
  private async resume(
    conn: PhoneConnection,
    p: Record<string, unknown>,
    session: Session,
    token: string,
    refreshDigest: string | null,
    supports: ClientSupports,
  ): Promise<Granted | undefined> {
    // The reconnecting client may describe itself anew (renamed, updated): keep what it says now.
    const device = deviceInfo(p);
    if (typeof device === 'string') return void conn.failAuth(device);
    const prefix = session.tokenPrefix;
    const sent = sentDeviceFields(p, device);
    const fresh = this.freshRefresh();
    const stored = await this.loop.run(`device:${prefix}`, (m, t) => {
      const out: NewEvent<RelayEvent>[] = [
        ...reconnectTrust(m, session, { sentDigest: refreshDigest, issue: fresh.issue, ip: conn.ip }, this.trustPolicy(), t),
      ];
      // A copy of a rotated-out refresh token signs the device out; a session ended by an earlier decision of this batch stays ended.
      const current = m.sessions.byTokenPrefix(prefix);
      if (out.some((e) => e.type === 'trust.reuse_detected') || !current || !isLive(current, t)) return out;
      return [...updateDevice(m, prefix, sent), ...out, connected(conn, prefix, session.deviceId, supports)];
    });
    if (stored.some((e) => e.type === 'trust.reuse_detected')) return void this.refuseReuse(conn);
    if (!stored.some((e) => e.type === 'phone.connected'))
      return void conn.failAuth('this session ended while the connection was being authenticated');
    // A trust adopted now, or a refresh token put right (reissued beside its own session): auth.ok carries it.
    const issued = stored.some((e) => e.type === 'trust.issued' || (e.type === 'trust.rotated' && e.data.reason === 'reissued')) ? fresh.token : null;
    return { prefix, deviceId: session.deviceId, token, issued, undo: async () => undefined, renewed: false };
  }

  /** A trusted device's renewal: the rotation, the new session and the connect, in one batch. */
  private async renew(
    conn: PhoneConnection,
    p: Record<string, unknown>,
    refreshDigest: string,
    sessionDigest: string | null,
    supports: ClientSupports,
  ): Promise<Granted | undefined> {
    const device = deviceInfo(p);
    if (typeof device === 'string') return void conn.failAuth(device);
    const fresh = this.freshRefresh();
    const minted = this.newToken();
    // Read in the decision, not from the durable models: a renewal decided a moment ago may not be durable yet.
    let renewal: Renewal | null = null;
    const stored = await this.loop.run(`public:${conn.ip}`, (m, t) => {
      const before = m.trust.byRefreshDigest(refreshDigest);
      renewal = before
        ? { trustId: before.trustId, previousDigest: refreshDigest, previousPrefix: before.tokenPrefix, previousTokenDigest: before.tokenDigest }
        : null;
      const out = renewTrust(
        m,
        {
          refreshDigest,
          sessionDigest,
          next: fresh.issue,
          tokenDigest: this.secrets.digest(minted.token),
          tokenPrefix: minted.prefix,
          device,
          ip: conn.ip,
          transport: this.config.tls ? 'wss' : 'ws',
        },
        this.trustPolicy(),
        t,
      );
      return out.some((e) => e.type === 'session.created') ? [...out, connected(conn, minted.prefix, device.deviceId, supports)] : out;
    });
    if (stored.some((e) => e.type === 'trust.reuse_detected')) {
      await this.countFailure(conn, 'refresh token reused after rotation');
      return void this.refuseReuse(conn);
    }
    const refused = stored.find((e) => e.type === 'trust.refused');
    if (refused) return void (await this.recordFailure(conn, 'token', `refresh token refused: ${(refused.data as { reason: string }).reason}`));
    const r = renewal as Renewal | null;
    if (!stored.some((e) => e.type === 'session.created') || !r) return void (await this.recordFailure(conn, 'token', 'unknown refresh token'));
    const undo = () => this.abandonRenewal(r, minted.prefix);
    return { prefix: minted.prefix, deviceId: device.deviceId, token: minted.token, issued: fresh.token, undo, renewed: true };
  }

  /** A pairing code: its consumption, the session, the trust and the connect, in one batch. */
  private async pair(conn: PhoneConnection, p: Record<string, unknown>, supports: ClientSupports): Promise<Granted | undefined> {
    const code = normalizeCode(p.pairing_code);
    if (!code) return void (await this.recordFailure(conn, 'code', 'malformed pairing code'));
    const device = deviceInfo(p);
    if (typeof device === 'string') return void conn.failAuth(device);
    const choices = pairingChoices(p);
    if (typeof choices === 'string') return void conn.failAuth(choices);
    const fresh = this.freshRefresh();
    const minted = this.newToken();
    let stored;
    try {
      stored = await this.loop.run(`public:${conn.ip}`, (m, t) => [
        ...consumeCode(
          m,
          {
            codeDigest: this.secrets.digest(code),
            tokenDigest: this.secrets.digest(minted.token),
            tokenPrefix: minted.prefix,
            device,
            ip: conn.ip,
            choices,
            transport: this.config.tls ? 'wss' : 'ws',
            trust: { issue: fresh.issue, policy: this.trustPolicy() },
          },
          t,
        ),
        connected(conn, minted.prefix, device.deviceId, supports),
      ]);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'auth.pending_approval') return void conn.failAuth(err.message, 'pending_approval');
      if (err instanceof DomainError && err.kind === 'unauthorized') {
        const state = String(err.extra.code_state ?? 'unknown');
        return void (await this.recordFailure(conn, 'code', `${state} pairing code`, { reason: err.message, extra: err.extra }));
      }
      throw err;
    }
    const issued = stored.some((e) => e.type === 'trust.issued') ? fresh.token : null;
    return { prefix: minted.prefix, deviceId: device.deviceId, token: minted.token, issued, undo: () => this.abandon(minted.prefix), renewed: false };
  }

  /**
   * The socket joins its session and gets `auth.ok`. Its `phone.connected` is durable; if the socket closed
   * meanwhile, or a decision later in the same batch ended the session (a racing renewal found a copied
   * refresh token), its disconnect is recorded here and what was made for it undone.
   */
  private async admit(
    conn: PhoneConnection,
    env: Envelope,
    g: Granted,
    supports: ClientSupports,
    admitted: () => void,
    seen: () => SeenClose,
    answer: Answer,
  ): Promise<void> {
    const session = this.loop.models.sessions.byTokenPrefix(g.prefix);
    if (conn.closed || !session || !isLive(session, this.clock.now())) {
      if (!conn.closed) {
        // A renewal's session gone with its trust: a copy of the refresh token was presented at the same time.
        const reused = g.renewed && !this.loop.models.trust.forDevice(g.deviceId);
        if (reused) this.refuseReuse(conn);
        // Expired at this very moment: "not now", so the app comes back and renews (a revoked one is over).
        else if (session)
          refuseAuth(
            conn,
            new DomainError('auth.session_expired', 'unavailable', 'the session expired just now; reconnect', { retry_after: 1 }),
            this.logger,
          );
        else conn.failAuth('this session ended while the connection was being authenticated');
      }
      const closed = conn.sentClose ?? seen() ?? { code: 1006, reason: '' };
      await this.loop.record(`device:${g.prefix}`, [
        { type: 'phone.disconnected', data: { connId: conn.id, tokenPrefix: g.prefix, code: closed.code, reason: closed.reason.slice(0, 120) } },
      ]);
      return g.undo();
    }
    conn.principal = { kind: 'device', tokenPrefix: session.tokenPrefix, deviceId: session.deviceId, deviceName: session.deviceName };
    conn.supports = supports;
    admitted();
    // An authenticated socket no longer needs its deadline (nor the closure it holds for 30 s).
    clearTimeout(conn.authTimer);
    conn.authTimer = undefined;
    const grants = wireLiveGrants(session, this.clock.now());
    const trust = g.issued !== null ? this.loop.models.trust.forDevice(session.deviceId) : undefined;
    let written: () => void = () => undefined;
    answer.written = new Promise<void>((r) => (written = r));
    const delivered = conn.send(
      'system',
      'auth.ok',
      {
        session_token: g.token,
        token_prefix: session.tokenPrefix,
        server_version: this.runtime.version,
        expires_at: epoch(session.expiresAt),
        grants,
        transport_hint: session.transportHint,
        client_surface: session.clientSurface ?? 'unknown',
        device_form_factor: session.deviceFormFactor ?? 'unknown',
        // The profile catalog's rows; a Reach route credential for a phone that came through Secure Link.
        ...(await this.extras.for({ conn, session, sessionToken: g.token })),
        // The app stores a rotated refresh token from auth.ok (AuthManager.kt handleAuthOk) and sends it back.
        ...(g.issued !== null && trust ? { refresh_token: g.issued, refresh_expires_at: epoch(trust.expiresAt) } : {}),
      },
      env.id,
      undefined,
      () => written(),
    );
    if (!delivered) {
      written();
      await g.undo();
    }
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
  private async abandon(tokenPrefix: string): Promise<void> {
    this.logger.info({ tokenPrefix }, 'phone left before receiving its token: the new session is revoked');
    await this.loop.run('system', (m) => abandonSession(m, tokenPrefix));
  }

  /** `reason` goes to the log; the phone reads `told` (a pairing code's refusal says which), else the generic sentence. */
  private async recordFailure(
    conn: PhoneConnection,
    kind: 'code' | 'token',
    reason: string,
    told: { reason: string; extra: Record<string, unknown> } = { reason: INVALID_CREDENTIALS, extra: {} },
  ): Promise<void> {
    await this.loop.run(`public:${conn.ip}`, (m, now) => recordAuthFailure(m.rateLimit, { ip: conn.ip, kind, via: 'ws', reason }, now));
    conn.failAuth(told.reason, 'invalid_credentials', told.extra);
  }
}

/** The socket's connect, decided with the credential that admits it. */
function connected(conn: PhoneConnection, tokenPrefix: string, deviceId: string, supports: ClientSupports): NewEvent<PhoneConnected> {
  return {
    type: 'phone.connected',
    data: {
      connId: conn.id,
      tokenPrefix,
      deviceId,
      ip: conn.ip,
      path: conn.path,
      ...(Object.keys(supports).length > 0 ? { supports } : {}),
    },
  };
}
