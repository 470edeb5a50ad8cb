import { BeforeApplicationShutdown, Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DomainError, epoch, hasGrant, isLive, markSeen } from '@svc/domain';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { RawData, WebSocket } from 'ws';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { peerOf } from '../common/http/forwarded-peer';
import { isSameOrigin } from '../common/http/net';
import { Secrets } from '../common/auth/secrets';
import { rawSize, SocketGuards } from '../common/sockets/socket-guard';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import type { RelayConfig } from '../common/config/relay-config';
import { VIA_SECURE_LINK } from '../secure-link/secure-link.server';
import { AuthHandshake } from './auth-handshake';
import { ChannelRouter } from './channel-router';
import { CHANNEL_GRANT, CLOSE, KNOWN_CHANNELS, parseEnvelope, type Envelope } from './envelope';
import { PhoneConnection } from './phone-connection';

const PRE_AUTH_MAX_BYTES = 16 * 1024;

/** A phone socket carries its connection, so the shared listeners below find it. */
const CONN = Symbol('svc.phoneConnection');
type SocketWithConn = WebSocket & { [CONN]: PhoneConnection };
const connOf = (ws: WebSocket): PhoneConnection => (ws as SocketWithConn)[CONN];
/** The 30 s deadline of a socket that has not authenticated (cleared, and released, once it has). */
const onAuthDeadline = (conn: PhoneConnection): void => {
  conn.authTimer = undefined;
  if (!conn.principal) {
    conn.send('system', 'auth.fail', { reason: 'authentication timed out: send system/auth first' });
    conn.close(CLOSE.authTimeout, 'auth timeout');
  }
};

/**
 * Every phone socket: the registry (caps on sockets that have not authenticated, keepalive), the first
 * frame handed to the auth handshake, later frames routed to their channel with grant checks, and
 * revocation.
 */
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
  /**
   * Every phone socket's bounds and keepalive (common/sockets/socket-guard.ts): a phone that vanished without a FIN
   * (sleep, lost network), or answers no ping, is dropped within two intervals, so `clients`, `online` and its
   * handlers' state do not wait hours for TCP to notice.
   */
  private readonly guards: SocketGuards;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    private readonly router: ChannelRouter,
    private readonly handshake: AuthHandshake,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.guards = new SocketGuards({ ...config.sockets, pingIntervalMs: config.pingIntervalMs }, logger, 'phone');
  }

  onModuleInit(): void {
    this.sub = this.loop.bus.ofType('session.revoked', 'session.expired').subscribe((e) => {
      for (const c of this.byPrefix(e.data.tokenPrefix)) {
        const reason = e.type === 'session.expired' ? 'expired' : e.data.reason;
        c.send('system', 'session.revoked', { reason, revoked_self: e.type === 'session.revoked' && e.data.self });
        c.close(CLOSE.revoked, `session ${reason}`);
      }
    });
  }

  /** Before Nest disposes the ws server (which would cut sockets with 1006), say goodbye with 1001. */
  beforeApplicationShutdown(): void {
    this.sub?.unsubscribe();
    this.guards.stop();
    for (const c of this.conns) c.close(CLOSE.shutdown, 'relay stopping');
  }

  /**
   * A leader that lost the log (another relay took over) closes every phone socket with 1013 try again
   * later: each phone reconnects, through the shared address, to the relay that leads now.
   */
  closeAll(reason: string): void {
    for (const c of this.conns) c.close(CLOSE.tryAgainLater, reason);
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

  /** Every socket that passed auth. */
  authenticated(): PhoneConnection[] {
    return [...this.conns].filter((c) => c.principal !== null);
  }

  /** Authenticated sockets of one session (a phone may hold more than one). */
  byPrefix(prefix: string): PhoneConnection[] {
    return [...this.conns].filter((c) => c.principal?.tokenPrefix === prefix);
  }

  /** The handshake gate (before the 101): rate-limited IPs, foreign Origins. Idle-socket caps: makeRoomFor. */
  verifyUpgrade(req: IncomingMessage): { ok: true } | { ok: false; status: number; message: string; headers?: Record<string, string> } {
    const ip = peerOf(req, this.secrets);
    const now = this.clock.now();
    const blockedUntil = this.loop.models.rateLimit.blockedUntil(ip, now);
    if (blockedUntil !== null) {
      const retryAfter = String(Math.ceil((blockedUntil - now.getTime()) / 1000));
      return { ok: false, status: 429, message: 'Too Many Requests', headers: { 'Retry-After': retryAfter } };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !isSameOrigin(origin, req.headers.host)) return { ok: false, status: 403, message: 'Forbidden origin' };
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
    const conn = new PhoneConnection(ws, peerOf(req, this.secrets), path, this.guards);
    conn.viaSecureLink = (req as IncomingMessage & { [VIA_SECURE_LINK]?: boolean })[VIA_SECURE_LINK] === true;
    this.conns.add(conn);
    this.makeRoomFor(conn.subject);
    this.pending.add(conn);
    conn.authTimer = setTimeout(onAuthDeadline, this.config.authTimeoutMs, conn);
    // One set of listener functions for every socket (they find their connection on the socket), not four
    // closures per phone: an idle authenticated socket is mostly what it holds (issue 12, bench/footprint.js).
    (ws as SocketWithConn)[CONN] = conn;
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
    conn.guard.run(rawSize(data), () =>
      this.onMessage(conn, data, isBinary).catch((err: Error) => {
        this.logger.error({ conn: conn.id, err: err.message }, 'phone frame handler failed');
        conn.error('internal error handling that frame', 'internal');
      }),
    );
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
    this.loop
      .record(`device:${prefix}`, [
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
        : conn.failAuth('first frame must be a system/auth JSON envelope');
    const parsed = parseEnvelope(buf.toString('utf8'));
    if (!parsed.ok) return conn.principal ? conn.error(parsed.message, 'bad_frame') : conn.failAuth(parsed.message);
    const env = parsed.envelope;
    if (!conn.principal) {
      if (env.channel !== 'system' || env.type !== 'auth') return conn.failAuth('first frame must be system/auth');
      conn.authenticating = true;
      try {
        return await this.handshake.authenticate(conn, env, () => this.pending.delete(conn));
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
    this.loop
      .run(`device:${prefix}`, (m, now) => markSeen(m, prefix, conn.ip, 'ws', now))
      .catch((err: Error) => {
        this.logger.warn({ err: err.message }, 'last-seen not recorded');
      });
  }

  private onSystem(conn: PhoneConnection, env: Envelope): void {
    switch (env.type) {
      case 'ping':
        conn.send('system', 'pong', { ts: typeof env.payload.ts === 'number' ? env.payload.ts : epoch(this.clock.now()) }, env.id);
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
    const session = this.loop.models.sessions.byTokenPrefix(conn.principal!.tokenPrefix);
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
}
