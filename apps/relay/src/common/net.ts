import type { IncomingHttpHeaders } from 'node:http';

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

/** ARCHITECTURE.md: loopback = loopback peer, no proxy header, loopback Host, own Origin (if any). */
export function checkLoopback(peer: string | undefined, headers: IncomingHttpHeaders, port: number): LoopbackVerdict {
  if (!isLoopbackPeer(peer)) return { ok: false, reason: 'this route answers only to processes on the relay host (loopback)' };
  if (hasProxyHeader(headers)) return { ok: false, reason: 'loopback routes refuse proxied requests (a forwarding header was present)' };
  if (!isLoopbackHostHeader(headers.host))
    return { ok: false, reason: 'loopback routes need a loopback Host header (127.0.0.1, [::1] or localhost)' };
  const origin = headers.origin;
  if (!isOwnLoopbackOrigin(typeof origin === 'string' ? origin : undefined, port)) {
    return { ok: false, reason: 'cross-origin requests to loopback routes are refused' };
  }
  return { ok: true };
}
