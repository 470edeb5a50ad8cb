import { BeforeApplicationShutdown, Inject, Injectable, OnModuleInit } from '@nestjs/common';
import {
  abandonSession,
  consumeCode,
  DomainError,
  hasGrant,
  INVALID_CREDENTIALS,
  isLive,
  markSeen,
  normalizeCode,
  recordAuthFailure,
  assertNotBlocked,
  type DeviceInfo,
  type Session,
} from '@svc/domain';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { RawData, WebSocket } from 'ws';
import { Clock } from '../common/clock';
import { EventLog } from '../common/event-log';
import { normalizeIp } from '../common/net';
import { newSessionToken, Secrets, tokenPrefix } from '../common/secrets';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import type { RelayConfig } from '../common/config';
import { ChannelRouter } from './channel-router';
import { CHANNEL_GRANT, CLOSE, KNOWN_CHANNELS, parseEnvelope, type Envelope } from './envelope';
import { PhoneConnection } from './phone-connection';

const PRE_AUTH_MAX_BYTES = 16 * 1024;
const epoch = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

/** Every phone socket: first-frame auth, keepalive, channel routing with grant checks, revocation. */
@Injectable()
export class PhoneHub implements OnModuleInit, BeforeApplicationShutdown {
  private readonly conns = new Set<PhoneConnection>();
  private unauthenticated = 0;
  private sub: Subscription | null = null;
  private pingTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: EventLog,
    private readonly clock: Clock,
    private readonly secrets: Secrets,
    private readonly router: ChannelRouter,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.sub = this.log.bus.ofType('session.revoked', 'session.expired').subscribe((e) => {
      for (const c of this.byPrefix(e.data.tokenPrefix)) {
        const reason = e.type === 'session.expired' ? 'expired' : e.data.reason;
        c.send('system', 'session.revoked', { reason, revoked_self: e.type === 'session.revoked' && e.data.self });
        c.close(CLOSE.revoked, `session ${reason}`);
      }
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
    if (this.pingTimer) clearInterval(this.pingTimer);
    for (const c of this.conns) c.close(CLOSE.shutdown, 'relay stopping');
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

  /** The handshake gate (before the 101): rate-limited IPs, foreign Origins, too many idle sockets. */
  verifyUpgrade(req: IncomingMessage): { ok: true } | { ok: false; status: number; message: string; headers?: Record<string, string> } {
    const ip = normalizeIp(req.socket.remoteAddress);
    const now = this.clock.now();
    const blockedUntil = this.log.models.rateLimit.blockedUntil(ip, now);
    if (blockedUntil !== null) {
      const retryAfter = String(Math.ceil((blockedUntil - now.getTime()) / 1000));
      return { ok: false, status: 429, message: 'Too Many Requests', headers: { 'Retry-After': retryAfter } };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !sameOrigin(origin, req.headers.host)) return { ok: false, status: 403, message: 'Forbidden origin' };
    if (this.unauthenticated >= this.config.maxUnauthenticatedSockets) return { ok: false, status: 503, message: 'Too many pending connections' };
    return { ok: true };
  }

  accept(ws: WebSocket, req: IncomingMessage): void {
    const path = new URL(req.url ?? '/', 'http://relay').pathname;
    const conn = new PhoneConnection(ws, normalizeIp(req.socket.remoteAddress), path);
    this.conns.add(conn);
    this.unauthenticated++;
    const authTimer = setTimeout(() => {
      if (!conn.principal) {
        conn.send('system', 'auth.fail', { reason: 'authentication timed out: send system/auth first' });
        conn.close(CLOSE.authTimeout, 'auth timeout');
      }
    }, this.config.authTimeoutMs);
    ws.on('pong', () => (conn.alive = true));
    ws.on('message', (data: RawData, isBinary: boolean) => {
      conn.alive = true;
      conn.queue = conn.queue
        .then(() => this.onMessage(conn, data, isBinary))
        .catch((err: Error) => {
          this.logger.error({ conn: conn.id, err: err.message }, 'phone frame handler failed');
          conn.error('internal error handling that frame', 'internal');
        });
    });
    ws.on('error', (err) => this.logger.debug({ conn: conn.id, err: err.message }, 'phone socket error'));
    ws.on('close', (code: number, reason: Buffer) => {
      clearTimeout(authTimer);
      conn.closed = true;
      this.conns.delete(conn);
      if (!conn.principal) {
        this.unauthenticated--;
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
      this.log
        .run(`device:${prefix}`, () => [
          { type: 'phone.disconnected', data: { connId: conn.id, tokenPrefix: prefix, code, reason: reason.toString().slice(0, 120) } },
        ])
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'disconnect not recorded'));
    });
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
      return this.authenticate(conn, env);
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
    let session: Session | undefined;
    let token: string;
    let paired = false;
    if (typeof p.session_token === 'string' && p.session_token.length > 0) {
      token = p.session_token;
      session = p.session_token.length <= 512 ? this.log.models.sessions.byToken(this.secrets.digest(token), now) : undefined;
      if (!session) return this.recordFailure(conn, 'token', 'unknown, revoked or expired session token');
    } else if (p.pairing_code !== undefined) {
      const code = normalizeCode(p.pairing_code);
      if (!code) return this.recordFailure(conn, 'code', 'malformed pairing code');
      const device = deviceInfo(p);
      if (typeof device === 'string') return this.failAuth(conn, device);
      let prefix = '';
      do {
        token = newSessionToken();
        prefix = tokenPrefix(token);
      } while (this.log.models.sessions.byTokenPrefix(prefix));
      try {
        await this.log.run(`public:${conn.ip}`, (m, t) =>
          consumeCode(
            m,
            { codeDigest: this.secrets.digest(code), tokenDigest: this.secrets.digest(token), tokenPrefix: prefix, device, ip: conn.ip },
            t,
          ),
        );
      } catch (err) {
        if (err instanceof DomainError && err.code === 'auth.pending_approval') return this.failAuth(conn, err.message, 'pending_approval');
        if (err instanceof DomainError && err.kind === 'unauthorized')
          return this.recordFailure(conn, 'code', 'unknown, used or expired pairing code');
        throw err;
      }
      session = this.log.models.sessions.byTokenPrefix(prefix)!;
      paired = true;
    } else {
      return this.failAuth(conn, 'system/auth needs pairing_code or session_token');
    }
    if (conn.closed) return this.abandon(paired, session.tokenPrefix);
    conn.principal = { kind: 'device', tokenPrefix: session.tokenPrefix, deviceId: session.deviceId, deviceName: session.deviceName };
    this.unauthenticated--;
    await this.log.run(`device:${session.tokenPrefix}`, () => [
      {
        type: 'phone.connected',
        data: { connId: conn.id, tokenPrefix: session.tokenPrefix, deviceId: session.deviceId, ip: conn.ip, path: conn.path },
      },
    ]);
    const grants: Record<string, number | null> = {};
    for (const [ch, until] of Object.entries(session.grants)) if (hasGrant(session, ch, this.clock.now())) grants[ch] = epoch(until);
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
      },
      env.id,
    );
    if (!delivered) await this.abandon(paired, session.tokenPrefix);
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

const text = (v: unknown, max: number): string | null => (typeof v === 'string' && v.trim().length > 0 ? v.trim().slice(0, max) : null);

/** Device fields of `system/auth`; returns an error message when a field is the wrong type. */
function deviceInfo(p: Record<string, unknown>): DeviceInfo | string {
  for (const f of ['device_name', 'device_id', 'device_model', 'device_platform']) {
    if (p[f] !== undefined && p[f] !== null && typeof p[f] !== 'string') return `${f} must be a string`;
  }
  return {
    deviceId: text(p.device_id, 128) ?? '',
    deviceName: text(p.device_name, 64) ?? 'Phone',
    deviceModel: text(p.device_model, 64),
    devicePlatform: text(p.device_platform, 32),
  };
}
