import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

const LOOPBACK_PEERS = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host', 'x-forwarded-proto'];
const LOOPBACK_HOST_RE = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

/** The socket's peer, never a forwarded header. IPv4-mapped IPv6 is shown as IPv4. */
export function normalizeIp(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export function isLoopbackPeer(address: string | undefined): boolean {
  return address !== undefined && LOOPBACK_PEERS.has(address);
}

export function hasProxyHeader(headers: IncomingHttpHeaders): boolean {
  return PROXY_HEADERS.some((h) => headers[h] !== undefined);
}

/** DNS rebinding guard: a loopback route answers only to a loopback literal or `localhost`. */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  return host !== undefined && LOOPBACK_HOST_RE.test(host);
}

/** An `Origin` a loopback route accepts: absent, or a loopback origin on the relay's own port. */
export function isOwnLoopbackOrigin(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true;
  try {
    const u = new URL(origin);
    const p = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopbackHostHeader(u.host) && p === port;
  } catch {
    return false;
  }
}

/** A browser's `Origin` naming the host it sent the request to (the phone socket's and `/mcp`'s rule): same scheme-less authority. */
export function isSameOrigin(origin: string, host: string | undefined): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && host !== undefined && u.host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}

export type LoopbackVerdict = { ok: true } | { ok: false; reason: string };

/**
 * ARCHITECTURE.md: loopback = a loopback peer, no proxy header, an origin-form target with one loopback
 * Host, and nothing a browser says of another site (Origin, Sec-Fetch-Site, Referer). Necessary, never
 * sufficient: nginx's default `proxy_pass`, `ssh -R` or socat forward the world with none of these, so the
 * operator's powers also need the operator key (auth-hook.ts); only the platform routes stop here.
 */
export function checkLoopback(req: IncomingMessage, port: number): LoopbackVerdict {
  const headers = req.headers;
  if (!isLoopbackPeer(req.socket.remoteAddress)) return { ok: false, reason: 'this route answers only to processes on the relay host (loopback)' };
  if (hasProxyHeader(headers)) return { ok: false, reason: 'loopback routes refuse proxied requests (a forwarding header was present)' };
  // `GET http://evil.example/x` (absolute form) is what a forward proxy sends; a local client names a path.
  if (!req.url?.startsWith('/')) return { ok: false, reason: 'loopback routes take a path as the request target, not an absolute URL' };
  if (hostHeaderCount(req.rawHeaders) !== 1) return { ok: false, reason: 'loopback routes need exactly one Host header' };
  if (!isLoopbackHostHeader(headers.host))
    return { ok: false, reason: 'loopback routes need a loopback Host header (127.0.0.1, [::1] or localhost)' };
  const origin = headers.origin;
  if (!isOwnLoopbackOrigin(typeof origin === 'string' ? origin : undefined, port)) {
    return { ok: false, reason: 'cross-origin requests to loopback routes are refused' };
  }
  if (headers['sec-fetch-site'] === 'cross-site') return { ok: false, reason: 'requests another site made the browser send are refused' };
  const referer = headers.referer;
  if (referer !== undefined && !isOwnLoopbackOrigin(originOf(referer), port)) {
    return { ok: false, reason: 'requests from pages of another origin (Referer) are refused' };
  }
  return { ok: true };
}

function hostHeaderCount(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') n++;
  return n;
}

/** The origin of a URL (`null` when it is none: a refusal, since a Referer that is no URL names no page of ours). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}
