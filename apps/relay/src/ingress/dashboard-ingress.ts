import * as http from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { PEER_HEADER, SECRET_HEADER } from '../common/http/forwarded-peer';
import { OPERATOR_KEY_HEADER } from '../common/auth/operator-key';
import { isLoopbackHost } from '../common/config/hosts';
import { forwardedHeaders, NOT_FORWARDED, refuseUpgrade, safeProxyPath as safe, sendJsonError as json } from '../common/http/proxy-http';

/** Where the dashboard mounts the ingress (spec 4.11). */
export const INGRESS_BASE = '/api/plugins/svc-relay/transport';
/** The dashboard's provider-usage route (spec 4.8): dashboard-authenticated, answered from the relay's `/usage/providers`. */
export const PROVIDER_USAGE_PATH = '/api/plugins/svc-relay/provider-usage';

/**
 * The client-safe allowlist: what a paired phone or desktop may reach through the dashboard's origin.
 * Never pairing or admin, bridge control, Device Control, desktop dispatch, media registration or
 * inspection, operator routes (relay info/security/update-check, Secure Link preflight, profile
 * enablement), notifications and Threads' host side: those are the host's, on loopback.
 */
const HTTP_ALLOW: ReadonlyArray<[string, RegExp]> = [
  ['GET', /^\/health$/],
  ['GET', /^\/sessions$/],
  ['DELETE', /^\/sessions\/[A-Za-z0-9_-]{1,64}$/],
  ['PATCH', /^\/sessions\/[A-Za-z0-9_-]{1,64}$/],
  ['POST', /^\/clipboard\/inbox$/],
  ['GET', /^\/chat\/image-activity$/],
  ['POST', /^\/media\/upload$/],
  ['GET', /^\/media\/by-path$/],
  ['GET', /^\/media\/[A-Za-z0-9_-]{22}$/],
  ['GET', /^\/voice\/config$/],
  ['POST', /^\/voice\/(transcribe|synthesize)$/],
  ['GET', /^\/voice\/(output|realtime|realtime-agent)\/config$/],
  ['PATCH', /^\/voice\/(output|realtime|realtime-agent)\/config$/],
  ['GET', /^\/voice\/(output|realtime|realtime-agent)\/providers\/[A-Za-z0-9_.-]{1,64}\/options$/],
  ['POST', /^\/voice\/(output|realtime|realtime-agent)\/providers\/[A-Za-z0-9_.-]{1,64}\/validate$/],
  ['POST', /^\/voice\/(output|realtime|realtime-agent)\/session$/],
  ['GET', /^\/phone\/threads$/],
  ['GET', /^\/context\/injected$/],
  ['POST', /^\/relay\/model-capabilities$/],
  ['GET', /^\/api\/profiles\/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/(config|avatar|skills|soul|memory)$/],
  ['PUT', /^\/api\/profiles\/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/soul$/],
  ['PUT', /^\/api\/profiles\/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\/memory\/[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$/],
  ['GET', /^\/usage\/providers$/],
];
const WS_ALLOW: ReadonlyArray<RegExp> = [/^\/ws$/, /^\/voice\/(output|realtime|realtime-agent)\/[A-Za-z0-9_-]{8,64}$/];

/** Never forwarded toward the relay (credentials of other trust domains, forwarding claims, hop-by-hop). */
const DROP = new Set([...NOT_FORWARDED, 'authorization', 'cookie', 'origin']);
const dropped = (name: string): boolean => DROP.has(name) || /-proxy-(secret|peer)$/.test(name);

export type IngressOptions = {
  /** The relay on this machine (`http://127.0.0.1:8767`). */
  relayUrl: string;
  /** The dashboard's own authentication of the request (its session cookie, its bearer). */
  authenticate: (req: http.IncomingMessage) => boolean | Promise<boolean>;
  /** Consumes a fresh dashboard WebSocket ticket (single use, short-lived); false when unknown or used. */
  consumeTicket: (ticket: string) => boolean | Promise<boolean>;
  /** The dashboard's own Host values and Origins: a WebSocket from anywhere else is refused. */
  allowedHosts: string[];
  allowedOrigins: string[];
  basePath?: string;
  maxBodyBytes?: number;
  /**
   * The relay's forwarder key (`readForwarderKey(svcHome)`: `<SVC_HOME>/relay/forwarder.key`, written by
   * the relay at start). With it the ingress vouches for each caller's address (`X-Svc-Proxy-Peer`), and
   * the relay keys its rate limits by that caller; without it every caller of the ingress shares one
   * limit (`127.0.0.1 via proxy`), still apart from the operator's own loopback.
   */
  forwarderKey?: string | null;
  /**
   * The relay's operator key (`readOperatorKey(<SVC_HOME>/relay)`): provider usage is the operator's
   * (`/usage/providers` on loopback needs it); the dashboard's signed-in user reads it as the operator of
   * this host. Without it that route answers 503 `ingress.operator_key_missing`.
   */
  operatorKey?: string | null;
};

const sessionOf = (req: http.IncomingMessage): string | null => {
  const v = req.headers['x-svc-relay-session'] ?? req.headers['x-hermes-relay-session'];
  const s = Array.isArray(v) ? v[0] : v;
  return s && /^[\x21-\x7e]{8,512}$/.test(s.trim()) ? s.trim() : null;
};

/** A WebSocket close frame from the server side (unmasked): how the ingress ends a tunnelled socket itself. */
function closeFrame(code: number, reason: string): Buffer {
  const r = Buffer.from(reason).subarray(0, 120);
  const body = Buffer.alloc(2 + r.length);
  body.writeUInt16BE(code, 0);
  r.copy(body, 2);
  return Buffer.concat([Buffer.from([0x88, body.length]), body]);
}

/**
 * The dashboard's same-origin ingress to the relay (spec 4.11), as a component the dashboard mounts:
 * `handle(req, res)` and `handleUpgrade(req, socket, head)` from its HTTP server for paths under
 * `/api/plugins/svc-relay/transport` (each returns false for a path that is not its), `disable()` when
 * the plugin is turned off (every tunnelled socket closed with 1001, new requests 503), `enable()`.
 *
 * HTTP: a fixed allowlist (method and path), the dashboard's authentication, then the paired relay
 * session from `X-Svc-Relay-Session` (or its `hermes` spelling), sent to the relay as its bearer; the
 * dashboard's credentials never reach the relay and the relay's cookies never come back. The relay sees a
 * forwarded request (`X-Forwarded-For`), never a loopback operator. WebSocket: the dashboard's Host and
 * Origin, a fresh single-use ticket (`?ticket=`), then the socket is tunnelled to the relay, which still
 * wants its first-frame authentication and enforces grants.
 */
export class DashboardIngress {
  private readonly base: string;
  private readonly relay: URL;
  private readonly sockets = new Set<Duplex>();
  private enabled = true;

  constructor(private readonly opts: IngressOptions) {
    let base = opts.basePath ?? INGRESS_BASE;
    while (base.endsWith('/')) base = base.slice(0, -1);
    this.base = base;
    this.relay = new URL(opts.relayUrl);
    if (this.relay.protocol !== 'http:' || !isLoopbackHost(this.relay.hostname))
      throw new Error('the ingress forwards to the relay on this machine only (http://127.0.0.1:<port>)');
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  disable(): void {
    this.enabled = false;
    for (const s of this.sockets) {
      if (s.writable) s.write(closeFrame(1001, 'svc-relay plugin disabled'));
      s.destroy();
    }
    this.sockets.clear();
  }

  enable(): void {
    this.enabled = true;
  }

  /** The caller's address with the forwarder key, so the relay keys limits by the caller, not by this forwarder. */
  private vouch(req: http.IncomingMessage): Record<string, string> {
    const key = this.opts.forwarderKey;
    const peer = req.socket.remoteAddress;
    return key && peer ? { [PEER_HEADER]: peer, [SECRET_HEADER]: key } : {};
  }

  private tailOf(req: http.IncomingMessage): string | null {
    const raw = req.url ?? '/';
    if (raw !== this.base && !raw.startsWith(`${this.base}/`) && !raw.startsWith(`${this.base}?`)) return null;
    return raw.slice(this.base.length) || '/';
  }

  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const raw = req.url ?? '/';
    if (raw === PROVIDER_USAGE_PATH || raw.startsWith(`${PROVIDER_USAGE_PATH}?`)) {
      void this.providerUsage(req, res, raw.slice(PROVIDER_USAGE_PATH.length));
      return true;
    }
    const tail = this.tailOf(req);
    if (tail === null) return false;
    void this.forward(req, res, tail);
    return true;
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse, tail: string): Promise<void> {
    if (!this.enabled) return json(res, 503, 'ingress.disabled', 'the svc-relay dashboard plugin is disabled');
    if (!safe(tail)) return json(res, 400, 'ingress.unsafe_path', 'unsafe path');
    const path = tail.split('?')[0];
    const matches = HTTP_ALLOW.filter(([, re]) => re.test(path));
    if (matches.length === 0) return json(res, 404, 'ingress.not_allowed', 'not a route the dashboard forwards to the relay');
    if (!matches.some(([m]) => m === req.method))
      return json(res, 405, 'ingress.method_not_allowed', `${req.method} is not forwarded for this route`);
    if (!(await this.opts.authenticate(req))) return json(res, 401, 'ingress.dashboard_auth', 'dashboard authentication required');
    const session = sessionOf(req);
    if (!session) return json(res, 401, 'ingress.no_relay_session', 'X-Svc-Relay-Session must carry the paired relay session');
    const declared = Number(req.headers['content-length'] ?? 0);
    const max = this.opts.maxBodyBytes ?? 32 * 1024 * 1024;
    if (declared > max) return json(res, 413, 'ingress.too_large', `at most ${max} bytes`);
    const headers = forwardedHeaders(req.headers, dropped);
    if (req.headers['transfer-encoding']) headers['transfer-encoding'] = 'chunked';
    headers.host = this.relay.host;
    headers.authorization = `Bearer ${session}`;
    headers['x-forwarded-for'] = req.socket.remoteAddress ?? 'unknown';
    Object.assign(headers, this.vouch(req));
    const up = http.request(new URL(tail, this.relay), { method: req.method, headers, timeout: 120_000 }, (ures) => {
      res.writeHead(
        ures.statusCode ?? 502,
        forwardedHeaders(ures.headers, (k) => k === 'set-cookie' || NOT_FORWARDED.has(k)),
      );
      ures.pipe(res);
    });
    up.on('timeout', () => up.destroy(new Error('relay timed out')));
    up.on('error', () => (res.headersSent ? res.destroy() : json(res, 502, 'ingress.relay_unavailable', 'the relay did not answer')));
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        up.destroy();
        if (!res.headersSent) json(res, 413, 'ingress.too_large', `at most ${max} bytes`);
        req.destroy();
      }
    });
    req.pipe(up);
  }

  /**
   * `GET /api/plugins/svc-relay/provider-usage[?profile=&session_id=]` (spec 4.8): the dashboard's own user
   * (its authentication, no relay session) reads the relay's provider usage, as the operator of this host.
   * Only `profile` and `session_id` are passed on; nothing else of the request reaches the relay.
   */
  private async providerUsage(req: http.IncomingMessage, res: http.ServerResponse, query: string): Promise<void> {
    if (!this.enabled) return json(res, 503, 'ingress.disabled', 'the svc-relay dashboard plugin is disabled');
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, 'ingress.method_not_allowed', 'GET only');
    if (!(await this.opts.authenticate(req))) return json(res, 401, 'ingress.dashboard_auth', 'dashboard authentication required');
    const given = new URLSearchParams(query.replace(/^\?/, ''));
    const pass = new URLSearchParams();
    for (const k of ['profile', 'session_id']) {
      const v = given.get(k);
      if (v !== null) pass.set(k, v);
    }
    const key = this.opts.operatorKey;
    if (!key)
      return json(
        res,
        503,
        'ingress.operator_key_missing',
        "provider usage is the operator's: the dashboard cannot read the relay's operator key (<SVC_HOME>/relay/operator.key)",
      );
    const target = new URL(`/usage/providers${pass.size ? `?${pass.toString()}` : ''}`, this.relay);
    const headers = { host: this.relay.host, accept: 'application/json', [OPERATOR_KEY_HEADER]: key };
    const up = http.get(target, { headers, timeout: 10_000 }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, { 'content-type': ures.headers['content-type'] ?? 'application/json', 'cache-control': 'no-store' });
      ures.pipe(res);
    });
    up.on('timeout', () => up.destroy(new Error('timeout')));
    up.on('error', () => (res.headersSent ? res.destroy() : json(res, 502, 'ingress.relay_unavailable', 'the relay did not answer')));
  }

  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const tail = this.tailOf(req);
    if (tail === null) return false;
    void this.tunnel(req, socket, head, tail);
    return true;
  }

  private async tunnel(req: http.IncomingMessage, socket: Duplex, head: Buffer, tail: string): Promise<void> {
    if (!this.enabled) return refuseUpgrade(socket, 503, 'ingress.disabled', 'the svc-relay dashboard plugin is disabled');
    if (!safe(tail)) return refuseUpgrade(socket, 400, 'ingress.unsafe_path', 'unsafe path');
    const [path, query = ''] = tail.split('?');
    if (!WS_ALLOW.some((re) => re.test(path))) return refuseUpgrade(socket, 404, 'ingress.not_allowed', 'not a socket the dashboard forwards');
    const host = String(req.headers.host ?? '').toLowerCase();
    if (!this.opts.allowedHosts.map((h) => h.toLowerCase()).includes(host))
      return refuseUpgrade(socket, 403, 'ingress.bad_host', 'not the dashboard host');
    const origin = req.headers.origin;
    if (origin !== undefined && !this.opts.allowedOrigins.includes(origin))
      return refuseUpgrade(socket, 403, 'ingress.bad_origin', 'not the dashboard origin');
    const params = new URLSearchParams(query);
    const ticket = params.get('ticket');
    if (!ticket || !(await this.opts.consumeTicket(ticket)))
      return refuseUpgrade(socket, 401, 'ingress.ticket', 'a fresh dashboard ticket is required (?ticket=)');
    params.delete('ticket');
    const rest = params.toString();
    const lines = [`GET ${path}${rest ? `?${rest}` : ''} HTTP/1.1`, `host: ${this.relay.host}`, 'connection: Upgrade', 'upgrade: websocket'];
    for (const [k, v] of Object.entries(forwardedHeaders(req.headers, dropped)))
      if (v !== undefined) for (const one of Array.isArray(v) ? v : [String(v)]) lines.push(`${k}: ${one}`);
    const session = sessionOf(req);
    if (session) lines.push(`authorization: Bearer ${session}`);
    lines.push(`x-forwarded-for: ${req.socket.remoteAddress ?? 'unknown'}`);
    for (const [k, v] of Object.entries(this.vouch(req))) lines.push(`${k}: ${v}`);
    const conn = net.connect(Number(this.relay.port || 80), this.relay.hostname.replace(/^\[|\]$/g, ''));
    conn.once('connect', () => {
      conn.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) conn.write(head);
      conn.pipe(socket);
      socket.pipe(conn);
      this.sockets.add(socket);
    });
    const end = () => {
      this.sockets.delete(socket);
      conn.destroy();
      socket.destroy();
    };
    conn.on('error', () =>
      socket.writable && !this.sockets.has(socket) ? refuseUpgrade(socket, 502, 'ingress.relay_unavailable', 'the relay did not answer') : end(),
    );
    conn.on('close', end);
    socket.on('error', end);
    socket.on('close', end);
  }
}
