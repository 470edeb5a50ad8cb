import type * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import type { Logger } from 'pino';
import { markedPeer, markPeer, reachPeer, vouchedPeer } from '../common/http/forwarded-peer';
import type { SecureLinkConfig } from '../common/config/relay-config';
import { TLS_LISTENER_OPTIONS } from '../common/http/tls-policy';
import type { SecureLinkView } from '../common/auth/tokens';
import type { SecureLinkIdentity } from './identity';
import { refuseUpgrade as refuse, safeProxyPath as safePath, sendJsonError as sendJson } from '../common/http/proxy-http';
import { apiRefusal, type ApiGate } from './api-gate';
import { forwardHttp, loopbackUpstream, tunnelUpgrade, UpstreamProbes, type Upstream } from './secure-link-upstream';

const DISPLAY = 'svc Secure Link';
/** Set on a request that came through Secure Link (the phone hub offers a Reach route credential only then). */
export const VIA_SECURE_LINK = Symbol.for('svc.viaSecureLink');
const DESCRIPTION = "Pinned TLS access to this host's relay, API and dashboard";

/**
 * The Secure Link origin (spec 4.11): one HTTPS listener with the relay's pinned identity and three fixed
 * namespaces. `/relay/...` is this relay, HTTP and WebSocket: the request is handed to the relay's own
 * server in this process with the prefix taken off and marked with the peer this origin vouches for (the
 * TLS peer's address, qualified when it is loopback; a Reach stream's credential), which the relay's rate
 * limits key by (common/http/forwarded-peer.ts); its loopback rules and auth apply unchanged. `/api/...` goes
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
  private readonly probes = new UpstreamProbes();
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
    const server = https.createServer({ cert: this.identity.certPem, key: this.identity.keyPem, ...TLS_LISTENER_OPTIONS });
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
    this.context ??= tls.createSecureContext({ cert: this.identity.certPem, key: this.identity.keyPem, ...TLS_LISTENER_OPTIONS });
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
      return void apiRefusal(this.apiGate, req, this.peerOf(req)).then((refusal) =>
        refusal
          ? sendJson(res, refusal.status, refusal.code, refusal.error, refusal.extra)
          : forwardHttp(this.api!, raw.slice('/api'.length), req, res, null, this.logger),
      );
    }
    if (pathname.startsWith('/dashboard/')) {
      if (!this.dashboard) return sendJson(res, 503, 'secure_link.dashboard_unavailable', 'RELAY_SECURE_LINK_DASHBOARD_URL must be http on loopback');
      void this.dashboardGate().then((ok) =>
        ok
          ? forwardHttp(this.dashboard!, raw.slice('/dashboard'.length), req, res, { publicHost: new URL(this.url).host }, this.logger)
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
          ? tunnelUpgrade(this.dashboard!, raw.slice('/dashboard'.length), req, socket, head)
          : refuse(socket, 503, 'secure_link.dashboard_unauthenticated', 'Secure Link serves the dashboard only while it requires a login'),
      );
      return;
    }
    refuse(socket, 404, 'secure_link.not_found', 'no WebSocket here');
  }

  private async relayHealth(res: http.ServerResponse, head: boolean): Promise<void> {
    const [api, dashboard] = await Promise.all([
      this.api && this.apiGate.key ? this.probes.probe(this.api, '/health', (status) => status >= 200 && status < 300) : false,
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
    return this.probes.probe(
      this.dashboard!,
      '/api/health',
      (status, body) => status === 200 && (body as { auth_required?: unknown } | null)?.auth_required === true,
    );
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

function dropSessionHints(h: http.IncomingHttpHeaders): void {
  delete h['x-svc-relay-session'];
  delete h['x-hermes-relay-session'];
}
