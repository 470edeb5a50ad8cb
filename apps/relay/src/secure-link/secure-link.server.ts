import { DomainError } from '@svc/domain';
import { createHash, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import type { Logger } from 'pino';
import { markedPeer, markPeer, reachPeer, vouchedPeer } from '../common/forwarded-peer';
import type { SecureLinkConfig } from '../common/config';
import type { SecureLinkView } from '../common/tokens';
import type { SecureLinkIdentity } from './identity';
import { forwardedHeaders, refuseUpgrade as refuse, safeProxyPath as safePath, sendJsonError as sendJson } from '../common/proxy-http';

/** What one request body through `/api` or `/dashboard` may be. */
const MAX_BODY = 16 * 1024 * 1024;
const PROBE_TTL_MS = 15_000;

const DISPLAY = 'svc Secure Link';
/** Set on a request that came through Secure Link (the phone hub offers a Reach route credential only then). */
export const VIA_SECURE_LINK = Symbol.for('svc.viaSecureLink');
const DESCRIPTION = "Pinned TLS access to this host's relay, API and dashboard";

type Upstream = { url: URL; name: 'API' | 'Dashboard' };

/**
 * What `/api` requires: the API server's key (API_SERVER_KEY, which the pairing QR hands to phones) as the
 * request's bearer, checked here before a byte reaches the API server (its compatibility routes may not
 * check it themselves). Without a key the namespace is not served. `check` records the outcome with the
 * relay's rate limiter (keyed by the peer): it rejects a blocked peer with a DomainError and counts a
 * wrong key (`failed`) as a bad token; a missing bearer is refused without counting, as the relay does.
 */
export type ApiGate = { key: string | null; check?: (peer: string, failed: boolean) => Promise<void> };

const API_BEARER_RE = /^Bearer\s+(\S{1,1024})\s*$/i;

/** An upstream of `/api` or `/dashboard` must be plain HTTP on this machine's loopback: Secure Link is the only TLS hop. */
export function loopbackUpstream(raw: string, name: Upstream['name']): Upstream | null {
  try {
    const url = new URL(raw);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost', '::1'].includes(host) || url.username || url.password || url.search || url.hash)
      return null;
    return { url, name };
  } catch {
    return null;
  }
}

/**
 * The Secure Link origin (spec 4.11): one HTTPS listener with the relay's pinned identity and three fixed
 * namespaces. `/relay/...` is this relay, HTTP and WebSocket: the request is handed to the relay's own
 * server in this process with the prefix taken off and marked with the peer this origin vouches for (the
 * TLS peer's address, qualified when it is loopback; a Reach stream's credential), which the relay's rate
 * limits key by (common/forwarded-peer.ts); its loopback rules and auth apply unchanged. `/api/...` goes
 * to the agent's API server, behind the API key (ApiGate), and `/dashboard/...` to the dashboard, behind
 * its own login (the dashboard gate), both on loopback, prefix stripped. The namespaces
 * share transport trust, never credentials: the relay-session hints (`X-Svc-Relay-Session`, `X-Hermes-
 * Relay-Session`) and forwarding claims are dropped everywhere, cookies never reach `/api`, and the
 * dashboard's cookies are scoped to `/dashboard`. `/relay/health` answers without a credential (a phone
 * probes it before it has one).
 */
export class SecureLinkServer implements SecureLinkView {
  private server: https.Server | null = null;
  private port = 0;
  private readonly api: Upstream | null;
  private readonly dashboard: Upstream | null;
  private readonly probes = new Map<string, { at: number; ok: Promise<boolean> }>();
  private readonly sockets = new Set<Duplex>();

  constructor(
    private readonly relayServer: http.Server | https.Server,
    private readonly identity: SecureLinkIdentity,
    private readonly config: SecureLinkConfig,
    readonly host: string,
    webapiUrl: string,
    private readonly logger: Logger,
    private readonly apiGate: ApiGate = { key: null },
  ) {
    this.api = loopbackUpstream(webapiUrl, 'API');
    this.dashboard = loopbackUpstream(config.dashboardUrl, 'Dashboard');
  }

  get pin(): string {
    return this.identity.pin;
  }

  get url(): string {
    return `https://${net.isIPv6(this.host) ? `[${this.host}]` : this.host}:${this.port}`;
  }

  get listeningPort(): number {
    return this.port;
  }

  async start(): Promise<void> {
    const server = https.createServer({ cert: this.identity.certPem, key: this.identity.keyPem, minVersion: 'TLSv1.2' });
    server.headersTimeout = 10_000;
    server.requestTimeout = 120_000;
    server.on('request', (req, res) => this.onRequest(req, res));
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
    server.on('connection', (s: net.Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    server.on('tlsClientError', () => undefined);
    server.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    for (const sock of this.sockets) sock.destroy();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /**
   * Accepts a connection that arrived another way (the Reach connector's streams): never loopback to the
   * relay. Its TLS socket is made here so it can carry the peer the connector vouches for (the credential
   * the broker matched), which the relay keys its limits by; the handshake has 10 s.
   */
  acceptStream(stream: Duplex, peer: string = reachPeer(null)): void {
    const server = this.server;
    if (!server) return void stream.destroy();
    this.context ??= tls.createSecureContext({ cert: this.identity.certPem, key: this.identity.keyPem, minVersion: 'TLSv1.2' });
    const sock = new tls.TLSSocket(stream, { isServer: true, secureContext: this.context, server });
    markPeer(sock, peer);
    this.sockets.add(sock);
    const handshake = setTimeout(() => sock.destroy(), 10_000);
    sock.once('secure', () => {
      clearTimeout(handshake);
      server.emit('secureConnection', sock);
    });
    sock.on('error', () => sock.destroy());
    sock.once('close', () => {
      clearTimeout(handshake);
      this.sockets.delete(sock);
      stream.destroy();
    });
  }

  private context: tls.SecureContext | null = null;

  /** The peer of a request through this origin: what the Reach connector vouched for, else the TLS peer's address. */
  private peerOf(req: http.IncomingMessage): string {
    return markedPeer(req.socket) ?? vouchedPeer(req.socket.remoteAddress, 'secure-link');
  }

  services(available: { api: boolean; dashboard: boolean } | null = null) {
    return {
      relay: {
        supported: true,
        base_path: '/relay',
        health_path: '/relay/health',
        websocket_path: '/relay/ws',
        authentication: 'relay_session',
        ...(available ? { available: true } : {}),
      },
      api: { supported: this.api !== null, base_path: '/api', authentication: 'api_bearer', ...(available ? { available: available.api } : {}) },
      dashboard: {
        supported: this.dashboard !== null,
        base_path: '/dashboard',
        authentication: 'dashboard_session',
        ...(available ? { available: available.dashboard } : {}),
      },
    };
  }

  /** The endpoint candidate phones get in the QR and `/health` (`role: plugin_proxy`, the clients' name for it). */
  candidate(): Record<string, unknown> {
    return {
      role: 'plugin_proxy',
      priority: 0,
      // The desktop CLI takes a direct Secure Link route only when it is recommended.
      recommended: true,
      security: 'pinned_tls',
      display_name: DISPLAY,
      description: DESCRIPTION,
      capabilities: ['relay', 'api', 'dashboard'],
      proxy: {
        url: this.url,
        transport_hint: 'https',
        pin_sha256: this.identity.pin,
        cert_der: this.identity.certDer,
        surfaces: ['relay', 'api', 'dashboard'],
        services: this.services(),
      },
    };
  }

  identityView() {
    return { pin_sha256: this.identity.pin, source: this.identity.source, subject_alt_names: this.identity.sans, not_after: this.identity.notAfter };
  }

  // ---- requests --------------------------------------------------------------------------------

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    dropSessionHints(req.headers);
    const raw = req.url ?? '/';
    const pathname = raw.split('?')[0];
    if (req.method === 'CONNECT' || req.method === 'TRACE')
      return sendJson(res, 405, 'secure_link.method_not_allowed', `${req.method} is not served here`);
    if (!safePath(raw)) return sendJson(res, 400, 'secure_link.unsafe_path', 'unsafe proxy path (encoded slashes, dots or backslashes)');
    if (pathname === '/relay/health' && (req.method === 'GET' || req.method === 'HEAD')) return void this.relayHealth(res, req.method === 'HEAD');
    if (pathname.startsWith('/relay/')) {
      // The desktop CLI makes its HTTP base from its socket URL (`wss://host/relay/ws` -> `https://host/relay/ws`)
      // and appends the route: `/relay/ws/sessions` is `/relay/sessions` (the relay has nothing under `/ws/`).
      req.url = pathname.startsWith('/relay/ws/') ? raw.slice('/relay/ws'.length) : raw.slice('/relay'.length);
      markProxied(req, this.peerOf(req));
      this.relayServer.emit('request', req, res);
      return;
    }
    if (pathname.startsWith('/api/')) {
      if (!this.api)
        return sendJson(res, 503, 'secure_link.api_unavailable', 'the API namespace needs RELAY_WEBAPI_URL on this machine (http on loopback)');
      delete req.headers.cookie;
      return void this.apiAllowed(req).then((refusal) =>
        refusal
          ? sendJson(res, refusal.status, refusal.code, refusal.error, refusal.extra)
          : this.forward(this.api!, raw.slice('/api'.length), req, res, false),
      );
    }
    if (pathname.startsWith('/dashboard/')) {
      if (!this.dashboard) return sendJson(res, 503, 'secure_link.dashboard_unavailable', 'RELAY_SECURE_LINK_DASHBOARD_URL must be http on loopback');
      void this.dashboardGate().then((ok) =>
        ok
          ? this.forward(this.dashboard!, raw.slice('/dashboard'.length), req, res, true)
          : sendJson(
              res,
              503,
              'secure_link.dashboard_unauthenticated',
              'Secure Link serves the dashboard only while it requires a login (its /api/health says auth_required)',
            ),
      );
      return;
    }
    sendJson(res, 404, 'secure_link.not_found', 'Secure Link serves /relay/, /api/ and /dashboard/ only');
  }

  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    dropSessionHints(req.headers);
    const raw = req.url ?? '/';
    const pathname = raw.split('?')[0];
    if (!safePath(raw)) return refuse(socket, 400, 'secure_link.unsafe_path', 'unsafe proxy path');
    if (pathname.startsWith('/relay/')) {
      req.url = raw.slice('/relay'.length);
      markProxied(req, this.peerOf(req));
      this.relayServer.emit('upgrade', req, socket, head);
      return;
    }
    if (pathname.startsWith('/dashboard/') && this.dashboard) {
      void this.dashboardGate().then((ok) =>
        ok
          ? this.tunnelUpgrade(this.dashboard!, raw.slice('/dashboard'.length), req, socket, head)
          : refuse(socket, 503, 'secure_link.dashboard_unauthenticated', 'Secure Link serves the dashboard only while it requires a login'),
      );
      return;
    }
    refuse(socket, 404, 'secure_link.not_found', 'no WebSocket here');
  }

  /**
   * The `/api` gate: null when the request may pass; otherwise the refusal (503 without a key on this
   * relay, 401 for a missing or wrong key, 429 while the peer is blocked).
   */
  private async apiAllowed(
    req: http.IncomingMessage,
  ): Promise<{ status: number; code: string; error: string; extra?: Record<string, unknown> } | null> {
    const key = this.apiGate.key;
    if (!key)
      return {
        status: 503,
        code: 'secure_link.api_unauthenticated',
        error: 'Secure Link serves the API only while this relay holds its key (API_SERVER_KEY), which every request must carry as its bearer',
      };
    // The API server's health answers anyone, here as on its own port: the app probes it before it uses the
    // route (EndpointResolver: `GET <proxy>/api/health`, no credential). Only that exact request.
    if ((req.method === 'GET' || req.method === 'HEAD') && req.url === '/api/health') return null;
    const m = API_BEARER_RE.exec(req.headers.authorization ?? '');
    const ok = m !== null && sameSecret(m[1], key);
    try {
      if (this.apiGate.check) await this.apiGate.check(this.peerOf(req), m !== null && !ok);
      if (!ok) throw new DomainError('secure_link.api_unauthorized', 'unauthorized', 'send the API key as "Authorization: Bearer <key>"');
      return null;
    } catch (err) {
      const e = err instanceof DomainError ? err : new DomainError('secure_link.api_unauthorized', 'unauthorized', 'the API key was not accepted');
      return { status: e.kind === 'rate_limited' ? 429 : 401, code: e.code, error: e.message, extra: e.extra };
    }
  }

  private async relayHealth(res: http.ServerResponse, head: boolean): Promise<void> {
    const [api, dashboard] = await Promise.all([
      this.api && this.apiGate.key ? this.probe(this.api, '/health', (status) => status >= 200 && status < 300) : false,
      this.dashboard ? this.dashboardGate() : false,
    ]);
    const body = {
      status: 'ok',
      surface: 'svc_secure_link',
      display_name: DISPLAY,
      description: DESCRIPTION,
      security: 'pinned_tls',
      capabilities: ['relay', 'api', 'dashboard'],
      namespaces: ['relay', 'api', 'dashboard'],
      services: this.services({ api, dashboard }),
    };
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
    res.end(head ? undefined : text);
  }

  /** The dashboard is served only while it requires a login (its `/api/health` says `auth_required: true`). */
  private dashboardGate(): Promise<boolean> {
    return this.probe(
      this.dashboard!,
      '/api/health',
      (status, body) => status === 200 && (body as { auth_required?: unknown } | null)?.auth_required === true,
    );
  }

  /** One GET to an upstream, 3 s at most, its verdict kept 15 s and shared by concurrent askers. */
  private probe(up: Upstream, path: string, judge: (status: number, body: unknown) => boolean): Promise<boolean> {
    const key = up.url.href + path;
    const cached = this.probes.get(key);
    if (cached && Date.now() - cached.at < PROBE_TTL_MS) return cached.ok;
    const ok = new Promise<boolean>((resolve) => {
      const req = http.get(new URL(path, up.url), { timeout: 3000 }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= 64 * 1024) chunks.push(c);
        });
        res.on('end', () => {
          let body: unknown = null;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = null;
          }
          resolve(judge(res.statusCode ?? 0, body));
        });
        res.on('error', () => resolve(false));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
    });
    this.probes.set(key, { at: Date.now(), ok });
    return ok;
  }

  /** Plain HTTP to a loopback upstream: the body streamed within 16 MiB, redirects and cookies kept in their namespace. */
  private forward(up: Upstream, tail: string, req: http.IncomingMessage, res: http.ServerResponse, dashboard: boolean): void {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY)
      return sendJson(res, 413, 'secure_link.too_large', `a request body through Secure Link may be at most ${MAX_BODY} bytes`);
    const headers = forwardedHeaders(req.headers);
    if (req.headers['transfer-encoding']) headers['transfer-encoding'] = 'chunked';
    headers.host = up.url.host;
    if (dashboard) {
      headers['x-forwarded-prefix'] = '/dashboard';
      headers['x-forwarded-proto'] = 'https';
      headers['x-forwarded-host'] = new URL(this.url).host;
      headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
    }
    const target = new URL(tail.startsWith('/') ? tail : `/${tail}`, up.url);
    const upstream = http.request(target, { method: req.method, headers, timeout: 120_000 }, (ures) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(forwardedHeaders(ures.headers))) {
        if (v === undefined) continue;
        if (k === 'set-cookie') {
          if (!dashboard) continue;
          out[k] = (v as string[]).map(scopeCookie);
          continue;
        }
        if (k === 'location' && dashboard) {
          const loc = relocate(String(v), up.url);
          if (loc !== null) out[k] = loc;
          continue;
        }
        out[k] = v;
      }
      res.writeHead(ures.statusCode ?? 502, out);
      ures.pipe(res);
    });
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.on('error', (err) => {
      this.logger.warn({ upstream: up.name, err: err.message }, 'secure link upstream failed');
      if (!res.headersSent) sendJson(res, 502, 'secure_link.upstream_unavailable', `${up.name} upstream unavailable`);
      else res.destroy();
    });
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        upstream.destroy(new Error('body too large'));
        if (!res.headersSent) sendJson(res, 413, 'secure_link.too_large', `a request body through Secure Link may be at most ${MAX_BODY} bytes`);
        req.destroy();
      }
    });
    req.pipe(upstream);
  }

  /** A WebSocket to the dashboard: the upgrade request re-sent to the upstream (query kept), then bytes both ways. */
  private tunnelUpgrade(up: Upstream, tail: string, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const conn = net.connect(Number(up.url.port || 80), up.url.hostname.replace(/^\[|\]$/g, ''));
    const lines = [`${req.method} ${tail || '/'} HTTP/1.1`, `host: ${up.url.host}`, 'connection: Upgrade', 'upgrade: websocket'];
    for (const [k, v] of Object.entries(forwardedHeaders(req.headers)))
      if (v !== undefined) for (const one of Array.isArray(v) ? v : [String(v)]) lines.push(`${k}: ${one}`);
    lines.push('x-forwarded-prefix: /dashboard', 'x-forwarded-proto: https', `x-forwarded-for: ${req.socket.remoteAddress ?? ''}`);
    conn.once('connect', () => {
      conn.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) conn.write(head);
      conn.pipe(socket);
      socket.pipe(conn);
    });
    const end = () => {
      conn.destroy();
      socket.destroy();
    };
    conn.on('error', () => (socket.writable ? refuse(socket, 502, 'secure_link.upstream_unavailable', 'Dashboard upstream unavailable') : end()));
    socket.on('error', end);
    socket.on('close', () => conn.destroy());
    conn.on('close', () => socket.destroy());
  }
}

/**
 * A request through Secure Link is never the operator's, even from this machine (a local tunnel, the
 * Reach connector): the relay treats a request carrying a forwarding header as not loopback. The client's
 * own forwarding headers were dropped; this one names the TCP peer, for the log only. The relay keys its
 * limits by `peer`, marked on the request object itself (no client can send that), never by a header.
 */
function markProxied(req: http.IncomingMessage, peer: string): void {
  (req as http.IncomingMessage & { [VIA_SECURE_LINK]?: boolean })[VIA_SECURE_LINK] = true;
  markPeer(req, peer);
  for (const h of ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-prefix', 'forwarded', 'x-real-ip']) delete req.headers[h];
  req.headers['x-forwarded-for'] = req.socket.remoteAddress ?? 'unknown';
}

/** Constant time (digests of equal length); neither value is ever logged. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());
}

function dropSessionHints(h: http.IncomingHttpHeaders): void {
  delete h['x-svc-relay-session'];
  delete h['x-hermes-relay-session'];
}

function scopeCookie(c: string): string {
  const parts = c.split(';').map((x) => x.trim());
  const kept = parts.filter((x, i) => i === 0 || !/^(path|domain)=/i.test(x));
  return [...kept, 'Path=/dashboard'].join('; ');
}

function relocate(loc: string, upstream: URL): string | null {
  if (loc.startsWith('/') && !loc.startsWith('//')) return `/dashboard${loc}`;
  try {
    const u = new URL(loc);
    if (u.origin === upstream.origin) return `/dashboard${u.pathname}${u.search}`;
    return u.protocol === 'https:' ? loc : null;
  } catch {
    return null;
  }
}
