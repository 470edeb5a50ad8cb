import * as http from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { isLoopbackHost } from '../common/config/hosts';
import { forwardedHeaders, refuseUpgrade as refuse, sendJsonError as sendJson } from '../common/http/proxy-http';

/** What one request body through `/api` or `/dashboard` may be. */
const MAX_BODY = 16 * 1024 * 1024;
const PROBE_TTL_MS = 15_000;

export type Upstream = { url: URL; name: 'API' | 'Dashboard' };

/** An upstream of `/api` or `/dashboard` must be plain HTTP on this machine's loopback: Secure Link is the only TLS hop. */
export function loopbackUpstream(raw: string, name: Upstream['name']): Upstream | null {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname) || url.username || url.password || url.search || url.hash) return null;
    return { url, name };
  } catch {
    return null;
  }
}

/** Upstream health checks (Secure Link's `/relay/health` and its dashboard gate), each verdict kept a while. */
export class UpstreamProbes {
  private readonly probes = new Map<string, { at: number; ok: Promise<boolean> }>();

  /** One GET to an upstream, 3 s at most, its verdict kept 15 s and shared by concurrent askers. */
  probe(up: Upstream, path: string, judge: (status: number, body: unknown) => boolean): Promise<boolean> {
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
}

/**
 * Plain HTTP to a loopback upstream: the body streamed within 16 MiB, redirects and cookies kept in their
 * namespace. `dashboard` (null for `/api`) carries the origin's public host for the dashboard's forwarding headers.
 */
export function forwardHttp(
  up: Upstream,
  tail: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  dashboard: { publicHost: string } | null,
  logger: Logger,
): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY) return sendJson(res, 413, 'secure_link.too_large', `a request body through Secure Link may be at most ${MAX_BODY} bytes`);
  const headers = forwardedHeaders(req.headers);
  if (req.headers['transfer-encoding']) headers['transfer-encoding'] = 'chunked';
  headers.host = up.url.host;
  if (dashboard) {
    headers['x-forwarded-prefix'] = '/dashboard';
    headers['x-forwarded-proto'] = 'https';
    headers['x-forwarded-host'] = dashboard.publicHost;
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
    logger.warn({ upstream: up.name, err: err.message }, 'secure link upstream failed');
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
export function tunnelUpgrade(up: Upstream, tail: string, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
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
