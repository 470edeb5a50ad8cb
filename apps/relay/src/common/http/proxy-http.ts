import * as http from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Small pieces shared by the relay's forwarders (the Secure Link origin, the dashboard ingress): the raw
 * path check that keeps a namespace prefix from being escaped, and the JSON refusals they answer with.
 */

/**
 * Request headers a forwarder never passes on as they came: hop-by-hop ones, the client's own forwarding
 * claims (the forwarder states the peer itself), the Host, and the relay-session hints
 * (`X-Svc-Relay-Session` and its `hermes` spelling), which name a credential of the relay's trust domain.
 */
export const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-prefix',
  'x-real-ip',
  'x-svc-relay-session',
  'x-hermes-relay-session',
  // The relay's own forwarders vouch for the peer with these (common/http/forwarded-peer.ts); a client's are never passed on.
  'x-svc-proxy-peer',
  'x-svc-proxy-secret',
  'x-hermes-proxy-peer',
  'x-hermes-proxy-secret',
]);

/**
 * The headers a forwarder passes on: none of `drop` (NOT_FORWARDED by default), and none that the
 * message's own `Connection` header names (RFC 9110 7.6.1: `Connection: close, X-Secret-Thing` makes
 * `X-Secret-Thing` hop-by-hop, for this hop only). For requests and for the upstream's responses alike.
 */
export function forwardedHeaders(
  headers: http.IncomingHttpHeaders,
  drop: (name: string) => boolean = (name) => NOT_FORWARDED.has(name),
): http.OutgoingHttpHeaders {
  const listed = new Set<string>();
  const connection = headers.connection;
  for (const value of Array.isArray(connection) ? connection : connection ? [connection] : [])
    for (const name of value.split(',')) listed.add(name.trim().toLowerCase());
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !drop(k) && !listed.has(k)) out[k] = v;
  return out;
}

/** False for a raw path that could smuggle a traversal past a prefix: `\`, `//`, `%2f`, `%5c`, `%2e`, or a `.`/`..` segment. */
export function safeProxyPath(raw: string): boolean {
  const p = raw.split('?')[0];
  if (/\\|\/\/|%2f|%5c|%2e/i.test(p)) return false;
  return !p.split('/').some((seg) => seg === '.' || seg === '..');
}

/** `{ok: false, error, code, ...extra}` with the status, never cached (`retry_after` also as `Retry-After`). */
export function sendJsonError(res: http.ServerResponse, status: number, code: string, error: string, extra: Record<string, unknown> = {}): void {
  const text = JSON.stringify({ ok: false, error, code, ...extra });
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...(typeof extra.retry_after === 'number' ? { 'retry-after': String(extra.retry_after) } : {}),
  });
  res.end(text);
}

/** The same refusal for a WebSocket upgrade, written on the raw socket before any 101. */
export function refuseUpgrade(socket: Duplex, status: number, code: string, error: string): void {
  const text = JSON.stringify({ ok: false, error, code });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}
