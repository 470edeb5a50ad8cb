import { BeforeApplicationShutdown, Inject, Injectable, OnModuleInit } from '@nestjs/common';
import {
  epoch,
  abandonRenewal,
  abandonSession,
  reconnectTrust,
  renewTrust,
  consumeCode,
  DomainError,
  hasGrant,
  INVALID_CREDENTIALS,
  isLive,
  markSeen,
  normalizeCode,
  recordAuthFailure,
  assertNotBlocked,
  updateDevice,
  type DeviceInfo,
  type PairingChoices,
  type Session,
} from '@svc/domain';
import type { ClientSupports } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { RawData, WebSocket } from 'ws';
import { Clock } from '../common/clock';
import { CommandLoop } from '../common/command-loop';
import { peerOf } from '../common/forwarded-peer';
import { newSessionToken, Secrets, tokenPrefix } from '../common/secrets';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import type { RelayConfig } from '../common/config';
import { ProfileCatalog } from '../profiles/profile-catalog.service';
import { newToken, tokenSha256 } from '../reach/protocol';
import { VIA_SECURE_LINK } from '../secure-link/secure-link.server';
import { ChannelRouter } from './channel-router';
import { CHANNEL_GRANT, CLOSE, KNOWN_CHANNELS, parseEnvelope, type Envelope } from './envelope';
import { PhoneConnection } from './phone-connection';

const PRE_AUTH_MAX_BYTES = 16 * 1024;

/** A phone socket carries its connection, so the shared listeners below find it. */
const CONN = Symbol('svc.phoneConnection');
type SocketWithConn = WebSocket & { [CONN]: PhoneConnection };
const connOf = (ws: WebSocket): PhoneConnection => (ws as SocketWithConn)[CONN];
const onPong = function (this: WebSocket): void {
  connOf(this).alive = true;
};
/** The 30 s deadline of a socket that has not authenticated (cleared, and released, once it has). */
const onAuthDeadline = (conn: PhoneConnection): void => {
  conn.authTimer = undefined;
  if (!conn.principal) {
    conn.send('system', 'auth.fail', { reason: 'authentication timed out: send system/auth first' });
    conn.close(CLOSE.authTimeout, 'auth timeout');
  }
};

/** Every phone socket: first-frame auth, keepalive, channel routing with grant checks, revocation. */
@Injectable()
export class PhoneHub implements OnModuleInit, BeforeApplicationShutdown {
  private readonly conns = new Set<PhoneConnection>();
  /**
   * Sockets that have not authenticated yet, oldest first (a Set keeps insertion order). Neither cap
   * refuses a newcomer: the oldest idle socket (of its address, else of all) makes room, so a flood of
   * sockets that never authenticate cannot lock out a phone that authenticates promptly.
   */
  private readonly pending = new Set<PhoneConnection>();
  private sub: Subscription | null = null;
  /** Reach route credentials handed out, by credential id (a token is reused while it lives). */
  private readonly routes = new Map<string, { token: string; expiresAt: number }>();
  private profilesSub: Subscription | null = null;
  private pingTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    private readonly router: ChannelRouter,
    private readonly profiles: ProfileCatalog,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.sub = this.log.bus.ofType('session.revoked', 'session.expired').subscribe((e) => {
      // Its Reach route dies with it (best effort: the broker also lets it expire).
      const credentialId = this.routeCredentialId(e.data.tokenPrefix);
      if (this.routes.delete(credentialId)) this.runtime.reach?.revokeRoute(credentialId).catch(() => undefined);
      for (const c of this.byPrefix(e.data.tokenPrefix)) {
        const reason = e.type === 'session.expired' ? 'expired' : e.data.reason;
        c.send('system', 'session.revoked', { reason, revoked_self: e.type === 'session.revoked' && e.data.self });
        c.close(CLOSE.revoked, `session ${reason}`);
      }
    });
    // Every authenticated phone hears of a profile change (after it is durable). The app reads the array at
    // the envelope's top level; it is in the payload too, where the reference relay put it.
    this.profilesSub = this.log.bus.ofType('profile.catalog_changed').subscribe(() => {
      const profiles = this.profiles.rows();
      for (const c of this.conns) if (c.principal) c.send('pairing', 'profiles.updated', { profiles }, undefined, { profiles });
    });
    this.pingTimer = setInterval(() => {
      for (const c of this.conns) {
        if (c.ws.readyState !== c.ws.OPEN) continue;
        // No pong since the last ping: the phone vanished without a FIN (sleep, lost network). Drop it so
        // `clients`, `online` and its handlers' state do not wait hours for TCP to notice.
        if (!c.alive) {
          c.closed = true;
          c.ws.terminate();
          continue;
        }
        c.alive = false;
        c.ws.ping();
      }
    }, this.config.pingIntervalMs);
    this.pingTimer.unref();
  }

  /** Before Nest disposes the ws server (which would cut sockets with 1006), say goodbye with 1001. */
  beforeApplicationShutdown(): void {
    this.sub?.unsubscribe();
    this.profilesSub?.unsubscribe();
    if (this.pingTimer) clearInterval(this.pingTimer);
    for (const c of this.conns) c.close(CLOSE.shutdown, 'relay stopping');
  }

  private routeCredentialId(tokenPrefix: string): string {
    return this.secrets.mac('reach-route', tokenPrefix).slice(0, 22);
  }

  /**
   * `route_credential` (spec 4.11): a phone that came through Secure Link while Reach is connected gets a
   * route token for the broker (published as its digest first), so it can come back that way when the
   * direct routes fail. `expires_at` is whole seconds (the app reads a long).
   */
  private async routeCredential(session: Session, sessionToken: string): Promise<{ route_credential?: Record<string, unknown> }> {
    const reach = this.runtime.reach;
    if (!reach?.connected) return {};
    const credentialId = this.routeCredentialId(session.tokenPrefix);
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const expiresAt = session.expiresAt ? Math.floor(new Date(session.expiresAt).getTime() / 1000) : now + 30 * 86_400;
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

  /** Every open phone socket, authenticated or not. */
  openCount(): number {
    return this.conns.size;
  }

  /** Phones that passed auth. */
  authenticatedCount(): number {
    let n = 0;
    for (const c of this.conns) if (c.principal) n++;
    return n;
  }

  /** Authenticated sockets of one session (a phone may hold more than one). */
  byPrefix(prefix: string): PhoneConnection[] {
    return [...this.conns].filter((c) => c.principal?.tokenPrefix === prefix);
  }

  /** The handshake gate (before the 101): rate-limited IPs, foreign Origins. Idle-socket caps: makeRoomFor. */
  verifyUpgrade(req: IncomingMessage): { ok: true } | { ok: false; status: number; message: string; headers?: Record<string, string> } {
    const ip = peerOf(req, this.secrets);
    const now = this.clock.now();
    const blockedUntil = this.log.models.rateLimit.blockedUntil(ip, now);
    if (blockedUntil !== null) {
      const retryAfter = String(Math.ceil((blockedUntil - now.getTime()) / 1000));
      return { ok: false, status: 429, message: 'Too Many Requests', headers: { 'Retry-After': retryAfter } };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !sameOrigin(origin, req.headers.host)) return { ok: false, status: 403, message: 'Forbidden origin' };
    return { ok: true };
  }

  /**
   * Closes the oldest idle unauthenticated sockets until one more from `subject` fits under both caps.
   * A socket whose auth frame is being handled is skipped: dropping it mid-pairing would revoke the
   * session it is being given, so a phone that sent its auth promptly is never the one pushed out (only
   * sockets already authenticating can then exceed a cap, briefly, by as many as are in flight).
   */
  private makeRoomFor(subject: string): void {
    const evict = (conn: PhoneConnection) => {
      this.pending.delete(conn);
      this.logger.debug({ conn: conn.id }, 'unauthenticated socket dropped to make room');
      conn.close(CLOSE.tryAgainLater, 'too many unauthenticated connections');
      // A peer that never answers the close frame would keep its TCP socket for ws's 30 s close timeout.
      setTimeout(() => conn.ws.terminate(), 1_000).unref();
    };
    const idle = (c: PhoneConnection) => !c.authenticating;
    const mine = [...this.pending].filter((c) => c.subject === subject);
    const mineIdle = mine.filter(idle);
    for (let i = 0; i < mineIdle.length && mine.length - i >= this.config.maxUnauthenticatedPerAddress; i++) evict(mineIdle[i]);
    const allIdle = [...this.pending].filter(idle);
    for (let i = 0; i < allIdle.length && this.pending.size >= this.config.maxUnauthenticatedSockets; i++) evict(allIdle[i]);
  }

  accept(ws: WebSocket, req: IncomingMessage): void {
    const path = new URL(req.url ?? '/', 'http://relay').pathname;
    const conn = new PhoneConnection(ws, peerOf(req, this.secrets), path);
    conn.viaSecureLink = (req as IncomingMessage & { [VIA_SECURE_LINK]?: boolean })[VIA_SECURE_LINK] === true;
    this.conns.add(conn);
    this.makeRoomFor(conn.subject);
    this.pending.add(conn);
    conn.authTimer = setTimeout(onAuthDeadline, this.config.authTimeoutMs, conn);
    // One set of listener functions for every socket (they find their connection on the socket), not four
    // closures per phone: an idle authenticated socket is mostly what it holds (issue 12, bench/footprint.js).
    (ws as SocketWithConn)[CONN] = conn;
    ws.on('pong', onPong);
    ws.on('message', this.onFrame);
    ws.on('error', this.onSocketError);
    ws.on('close', this.onSocketClose);
  }

  // ws calls its listeners with the socket as `this`; each of these is made once, for this hub.
  private readonly onFrame = ((hub: PhoneHub) =>
    function (this: WebSocket, data: RawData, isBinary: boolean): void {
      hub.handleFrame(connOf(this), data, isBinary);
    })(this);
  private readonly onSocketError = ((hub: PhoneHub) =>
    function (this: WebSocket, err: Error): void {
      hub.logger.debug({ conn: connOf(this).id, err: err.message }, 'phone socket error');
    })(this);
  private readonly onSocketClose = ((hub: PhoneHub) =>
    function (this: WebSocket, code: number, reason: Buffer): void {
      hub.handleClose(connOf(this), code, reason);
    })(this);

  private handleFrame(conn: PhoneConnection, data: RawData, isBinary: boolean): void {
    conn.alive = true;
    conn.queue = conn.queue
      .then(() => this.onMessage(conn, data, isBinary))
      .catch((err: Error) => {
        this.logger.error({ conn: conn.id, err: err.message }, 'phone frame handler failed');
        conn.error('internal error handling that frame', 'internal');
      });
  }

  private handleClose(conn: PhoneConnection, code: number, reason: Buffer): void {
    clearTimeout(conn.authTimer);
    conn.authTimer = undefined;
    conn.closed = true;
    this.conns.delete(conn);
    if (!conn.principal) {
      this.pending.delete(conn);
      return;
    }
    // One channel's failing cleanup must neither skip the others nor the disconnect record (and a
    // throw here would escape the socket's close event and take the process down).
    for (const h of this.router.all()) {
      try {
        h.onClose?.(conn);
      } catch (err) {
        this.logger.error({ conn: conn.id, err: (err as Error).message }, 'channel onClose failed');
      }
    }
    const prefix = conn.principal.tokenPrefix;
    const closed = conn.sentClose ?? { code, reason: reason.toString() };
    this.log
      .run(`device:${prefix}`, () => [
        { type: 'phone.disconnected', data: { connId: conn.id, tokenPrefix: prefix, code: closed.code, reason: closed.reason.slice(0, 120) } },
      ])
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'disconnect not recorded'));
  }

  private async onMessage(conn: PhoneConnection, data: RawData, isBinary: boolean): Promise<void> {
    if (conn.closed) return;
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (!conn.principal && buf.length > PRE_AUTH_MAX_BYTES) return conn.close(CLOSE.tooBig, 'first frame too large');
    if (isBinary)
      return conn.principal
        ? conn.error('binary frames are not used; send JSON text frames', 'bad_frame')
        : this.failAuth(conn, 'first frame must be a system/auth JSON envelope');
    const parsed = parseEnvelope(buf.toString('utf8'));
    if (!parsed.ok) return conn.principal ? conn.error(parsed.message, 'bad_frame') : this.failAuth(conn, parsed.message);
    const env = parsed.envelope;
    if (!conn.principal) {
      if (env.channel !== 'system' || env.type !== 'auth') return this.failAuth(conn, 'first frame must be system/auth');
      conn.authenticating = true;
      try {
        return await this.authenticate(conn, env);
      } finally {
        conn.authenticating = false;
      }
    }
    this.touch(conn);
    if (env.channel === 'system') return this.onSystem(conn, env);
    return this.dispatch(conn, env);
  }

  /** A phone that talks over its socket is seen (written at most once a minute per session). */
  private touch(conn: PhoneConnection): void {
    const prefix = conn.principal!.tokenPrefix;
    this.log
      .run(`device:${prefix}`, (m, now) => markSeen(m, prefix, conn.ip, 'ws', now))
      .catch((err: Error) => {
        this.logger.warn({ err: err.message }, 'last-seen not recorded');
      });
  }

  private onSystem(conn: PhoneConnection, env: Envelope): void {
    switch (env.type) {
      case 'ping':
        conn.send(
          'system',
          'pong',
          { ts: typeof env.payload.ts === 'number' ? env.payload.ts : Math.floor(this.clock.now().getTime() / 1000) },
          env.id,
        );
        return;
      case 'pong':
        return;
      case 'auth':
        conn.error('this socket is already authenticated', 'already_authenticated', {}, env.id);
        return;
      default:
        conn.error(`unknown system message "${env.type}"`, 'unknown_type', {}, env.id);
    }
  }

  private async dispatch(conn: PhoneConnection, env: Envelope): Promise<void> {
    if (!(KNOWN_CHANNELS as readonly string[]).includes(env.channel) || env.channel === 'pairing') {
      return conn.error(`unknown channel "${env.channel}"`, 'unknown_channel', { channel: env.channel }, env.id);
    }
    const session = this.log.models.sessions.byTokenPrefix(conn.principal!.tokenPrefix);
    const now = this.clock.now();
    // Past its lifetime but not yet swept: the session is over now, whatever the channel's grant says.
    if (!session || !isLive(session, now)) {
      conn.send('system', 'session.revoked', { reason: 'expired', revoked_self: false });
      return conn.close(CLOSE.revoked, 'session expired');
    }
    const grant = CHANNEL_GRANT[env.channel];
    if (grant && !hasGrant(session, grant, now)) {
      const message = `the "${grant}" grant is missing or expired for this device (the operator grants it: \`svc relay pair --grants ${grant}=30d\` or PATCH /sessions/{token_prefix})`;
      return this.router.reportError(conn, env, { message, code: 'grant_required', extra: { grant } });
    }
    const handler = this.router.get(env.channel);
    if (!handler)
      return this.router.reportError(conn, env, {
        message: `channel "${env.channel}" is not available on this relay`,
        code: 'channel_unavailable',
        extra: {},
      });
    try {
      await handler.onFrame(conn, env);
    } catch (err) {
      if (err instanceof DomainError) return this.router.reportError(conn, env, { message: err.message, code: err.code, extra: { ...err.extra } });
      throw err;
    }
  }

  private async authenticate(conn: PhoneConnection, env: Envelope): Promise<void> {
    const p = env.payload;
    const now = this.clock.now();
    try {
      assertNotBlocked(this.log.models.rateLimit, conn.ip, now);
    } catch {
      return this.failAuth(conn, 'too many failed attempts from this address');
    }
    const supports = clientSupports(p);
    if (typeof supports === 'string') return this.failAuth(conn, supports);
    if (p.refresh_token !== undefined && p.refresh_token !== null && typeof p.refresh_token !== 'string') {
      return this.failAuth(conn, 'refresh_token must be a string');
    }
    // The app sends its refresh token beside its stored session token on every reconnect (AuthManager.kt).
    const refresh = typeof p.refresh_token === 'string' && p.refresh_token.length > 0 ? p.refresh_token : null;
    const refreshDigest = refresh !== null && refresh.length <= 512 ? this.secrets.digest(refresh) : null;
    const policy = this.trustPolicy();
    let session: Session | undefined;
    let token = '';
    let paired = false;
    /** The refresh token this auth.ok hands out, if one was issued or rotated. */
    let issued: string | null = null;
    let renewal: { trustId: string; previousDigest: string; previousPrefix: string } | null = null;
    const hasToken = typeof p.session_token === 'string' && p.session_token.length > 0;
    if (hasToken) {
      token = p.session_token as string;
      session = token.length <= 512 ? this.log.models.sessions.byToken(this.secrets.digest(token), now) : undefined;
    }
    if (session) {
      // The reconnecting client may describe itself anew (renamed, updated): keep what it says now.
      const device = deviceInfo(p);
      if (typeof device === 'string') return this.failAuth(conn, device);
      const prefix = session.tokenPrefix;
      const sent = {
        ...(p.device_name != null || p.device_hostname != null ? { deviceName: device.deviceName } : {}),
        ...(p.device_model !== undefined ? { deviceModel: device.deviceModel } : {}),
        ...(p.device_platform !== undefined ? { devicePlatform: device.devicePlatform } : {}),
        ...(p.device_hostname !== undefined ? { deviceHostname: device.deviceHostname } : {}),
        ...(p.client_surface !== undefined ? { clientSurface: device.clientSurface } : {}),
        ...(p.device_form_factor !== undefined ? { deviceFormFactor: device.deviceFormFactor } : {}),
      };
      const fresh = this.freshRefresh();
      const live = session;
      const stored = await this.log.run(`device:${prefix}`, (m, t) => [
        ...updateDevice(m, prefix, sent),
        ...reconnectTrust(m, live, { sentDigest: refreshDigest, issue: fresh.issue, ip: conn.ip }, policy, t),
      ]);
      if (stored.some((e) => e.type === 'trust.reuse_detected')) return this.refuseReuse(conn);
      if (stored.some((e) => e.type === 'trust.issued')) issued = fresh.token;
      session = this.log.models.sessions.byTokenPrefix(prefix) ?? session;
    } else if (refreshDigest !== null) {
      // The session ended (or is unknown): a trusted device renews it with its refresh token.
      const device = deviceInfo(p);
      if (typeof device === 'string') return this.failAuth(conn, device);
      const fresh = this.freshRefresh();
      const minted = this.newToken();
      token = minted.token;
      const prefix = minted.prefix;
      const before = this.log.models.trust.byRefreshDigest(refreshDigest);
      const stored = await this.log.run(`public:${conn.ip}`, (m, t) =>
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
      session = this.log.models.sessions.byTokenPrefix(prefix)!;
      issued = fresh.token;
      renewal = { trustId: before.trustId, previousDigest: refreshDigest, previousPrefix: before.tokenPrefix };
    } else if (hasToken) {
      return this.recordFailure(conn, 'token', 'unknown, revoked or expired session token');
    } else if (p.pairing_code !== undefined) {
      const code = normalizeCode(p.pairing_code);
      if (!code) return this.recordFailure(conn, 'code', 'malformed pairing code');
      const device = deviceInfo(p);
      if (typeof device === 'string') return this.failAuth(conn, device);
      const choices = pairingChoices(p);
      if (typeof choices === 'string') return this.failAuth(conn, choices);
      const fresh = this.freshRefresh();
      const minted = this.newToken();
      token = minted.token;
      const prefix = minted.prefix;
      let stored;
      try {
        stored = await this.log.run(`public:${conn.ip}`, (m, t) =>
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
        if (err instanceof DomainError && err.code === 'auth.pending_approval') return this.failAuth(conn, err.message, 'pending_approval');
        if (err instanceof DomainError && err.kind === 'unauthorized')
          return this.recordFailure(conn, 'code', 'unknown, used or expired pairing code');
        throw err;
      }
      if (stored.some((e) => e.type === 'trust.issued')) issued = fresh.token;
      session = this.log.models.sessions.byTokenPrefix(prefix)!;
      paired = true;
    } else {
      return this.failAuth(conn, 'system/auth needs pairing_code or session_token');
    }
    const abandon = () => (renewal ? this.abandonRenewal(renewal, session.tokenPrefix) : this.abandon(paired, session.tokenPrefix));
    if (conn.closed) return abandon();
    conn.principal = { kind: 'device', tokenPrefix: session.tokenPrefix, deviceId: session.deviceId, deviceName: session.deviceName };
    conn.supports = supports;
    this.pending.delete(conn);
    // An authenticated socket no longer needs its deadline (nor the closure it holds for 30 s).
    clearTimeout(conn.authTimer);
    conn.authTimer = undefined;
    await this.log.run(`device:${session.tokenPrefix}`, () => [
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
    for (const [ch, until] of Object.entries(session.grants)) if (hasGrant(session, ch, this.clock.now())) grants[ch] = epoch(until);
    const trust = issued !== null ? this.log.models.trust.forDevice(session.deviceId) : undefined;
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
        profiles: this.profiles.rows(),
        // The app stores a rotated refresh token from auth.ok (AuthManager.kt handleAuthOk) and sends it back.
        ...(issued !== null && trust ? { refresh_token: issued, refresh_expires_at: epoch(trust.expiresAt) } : {}),
        ...(conn.viaSecureLink ? await this.routeCredential(session, token) : {}),
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
      if (!this.log.models.sessions.byTokenPrefix(prefix)) return { token, prefix };
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
    this.failAuth(
      conn,
      'this device was signed out: its refresh token was used after it had been replaced (a copy?); pair it again',
      'refresh_reuse',
    );
  }

  /** A failed credential for the rate limiter, without closing (the caller answers). */
  private async countFailure(conn: PhoneConnection, reason: string): Promise<void> {
    await this.log.run(`public:${conn.ip}`, (m, now) => recordAuthFailure(m.rateLimit, { ip: conn.ip, kind: 'token', via: 'ws', reason }, now));
  }

  /** The socket closed before a renewal's auth.ok went out: the new session goes, the old refresh token stays current. */
  private async abandonRenewal(r: { trustId: string; previousDigest: string; previousPrefix: string }, newPrefix: string): Promise<void> {
    this.logger.info({ tokenPrefix: newPrefix }, 'phone left before receiving its renewed session: the renewal is undone');
    await this.log.run('system', (m) => abandonRenewal(m, { ...r, newPrefix }));
  }

  /**
   * The socket closed before `auth.ok` (and so the token) reached the phone. A session this pairing just
   * made is held by nobody: revoke it, so it is neither listed nor left for an attacker to guess at.
   */
  private async abandon(paired: boolean, tokenPrefix: string): Promise<void> {
    if (!paired) return;
    this.logger.info({ tokenPrefix }, 'phone left before receiving its token: the new session is revoked');
    await this.log.run('system', (m) => abandonSession(m, tokenPrefix));
  }

  private async recordFailure(conn: PhoneConnection, kind: 'code' | 'token', reason: string): Promise<void> {
    await this.log.run(`public:${conn.ip}`, (m, now) => recordAuthFailure(m.rateLimit, { ip: conn.ip, kind, via: 'ws', reason }, now));
    this.failAuth(conn, INVALID_CREDENTIALS);
  }

  private failAuth(conn: PhoneConnection, reason: string, code = 'invalid_credentials'): void {
    conn.send('system', 'auth.fail', { reason, code });
    conn.close(CLOSE.authFailed, 'auth failed');
  }
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && host !== undefined && u.host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}

/** Trimmed, control characters removed, cut to `max`; null when empty. */
const text = (v: unknown, max: number): string | null => {
  if (typeof v !== 'string') return null;
  const clean = v.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.length > 0 ? clean.slice(0, max) : null;
};

const DEVICE_FIELDS = ['device_name', 'device_id', 'device_model', 'device_platform', 'device_hostname', 'client_surface', 'device_form_factor'];

/** Device fields of `system/auth`; returns an error message when a field is the wrong type. */
function deviceInfo(p: Record<string, unknown>): DeviceInfo | string {
  for (const f of DEVICE_FIELDS) {
    if (p[f] !== undefined && p[f] !== null && typeof p[f] !== 'string') return `${f} must be a string`;
  }
  const hostname = text(p.device_hostname, 64);
  return {
    deviceId: text(p.device_id, 128) ?? '',
    deviceName: text(p.device_name, 64) ?? hostname ?? 'Phone',
    deviceModel: text(p.device_model, 64),
    devicePlatform: text(p.device_platform, 64),
    deviceHostname: hostname,
    clientSurface: text(p.client_surface, 32)?.toLowerCase() ?? null,
    deviceFormFactor: text(p.device_form_factor, 32)?.toLowerCase() ?? null,
  };
}

const MAX_CHOSEN_SECONDS = 315_360_000;
const MAX_MAP_KEYS = 32;

/** Seconds the phone chose: 0 (or beyond ten years) is "never", i.e. no cap on what the code grants. */
function chosenSeconds(v: unknown, field: string): number | null | string {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return `${field} must be a whole number of seconds >= 0 (0: never)`;
  return v === 0 || v > MAX_CHOSEN_SECONDS ? null : v;
}

/**
 * The phone's own TTL and grant choices (the app's picker): they can only narrow what the code grants
 * (`narrowTerms`). Channels the code does not grant are ignored.
 */
function pairingChoices(p: Record<string, unknown>): PairingChoices | string {
  const out: PairingChoices = {};
  if (p.ttl_seconds !== undefined && p.ttl_seconds !== null) {
    const ttl = chosenSeconds(p.ttl_seconds, 'ttl_seconds');
    if (typeof ttl === 'string') return ttl;
    out.ttlSeconds = ttl;
  }
  if (p.grants !== undefined && p.grants !== null) {
    if (typeof p.grants !== 'object' || Array.isArray(p.grants)) return 'grants must be an object of channel -> seconds';
    const entries = Object.entries(p.grants as Record<string, unknown>);
    if (entries.length > MAX_MAP_KEYS) return `grants: at most ${MAX_MAP_KEYS} channels`;
    out.grants = {};
    for (const [channel, value] of entries) {
      if (value === null) {
        out.grants[channel] = null;
        continue;
      }
      const seconds = chosenSeconds(value, `grants.${channel.slice(0, 32)}`);
      if (typeof seconds === 'string') return seconds;
      out.grants[channel] = seconds;
    }
  }
  return out;
}

const SUPPORT_KEY_RE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * `supports` of `system/auth`: a flat object of capability flags. Entries with another key shape or a
 * value that is not a boolean, a finite number or a string of at most 64 characters are dropped; at most
 * 32 are kept. Not an object at all: an error message.
 */
function clientSupports(p: Record<string, unknown>): ClientSupports | string {
  if (p.supports === undefined || p.supports === null) return {};
  if (typeof p.supports !== 'object' || Array.isArray(p.supports)) return 'supports must be an object';
  const out: ClientSupports = {};
  let n = 0;
  for (const [k, v] of Object.entries(p.supports as Record<string, unknown>)) {
    if (n >= MAX_MAP_KEYS) break;
    if (!SUPPORT_KEY_RE.test(k)) continue;
    if (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.length <= 64)) {
      out[k] = v;
      n++;
    }
  }
  return out;
}
