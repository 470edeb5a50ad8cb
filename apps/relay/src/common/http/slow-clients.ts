import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { rateLimitSubject } from '@svc/domain';
import type { Logger } from 'pino';

/**
 * Node's own timers bound how long a request's headers may trickle in (`headersTimeout`), but they are
 * checked only every `connectionsCheckingInterval` (30 s by default, so a 60 s bound cut after about
 * 84 s). The relay passes both at server creation (`serverTimeouts`). What Node does not bound is how many
 * such connections one address may hold: each costs a socket and memory, and a few thousand trickling
 * ones starve everyone. This guard caps, per address (IPv6 per /64), the connections whose first request
 * (or upgrade) has not arrived; past the cap the newcomer is closed at once, and other addresses are not
 * affected.
 */
export function serverTimeouts(headersTimeoutMs: number, requestTimeoutMs: number) {
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: Math.max(requestTimeoutMs, headersTimeoutMs),
    // Node checks both timeouts on this period: a quarter of the header bound, between 50 ms and 1 s.
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(headersTimeoutMs / 4))),
    handshakeTimeout: headersTimeoutMs,
  };
}

export function guardSlowConnections(
  server: Server,
  opts: { perAddress: number; tls: boolean; logger: Logger },
): { waiting(subject: string): number } {
  const waiting = new Map<string, Set<Socket>>();
  // A waiting socket's subject: a request on a socket that is not waiting (every keep-alive one after its first)
  // costs one lookup.
  const subjectOf = new WeakMap<Socket, string>();
  const release = (socket: Socket) => {
    const subject = subjectOf.get(socket);
    if (subject === undefined) return;
    subjectOf.delete(socket);
    const set = waiting.get(subject);
    if (!set?.delete(socket)) return;
    if (set.size === 0) waiting.delete(subject);
  };
  // Under TLS a request's socket is the TLS one, which 'secureConnection' hands out (the handshake itself
  // is bounded by `handshakeTimeout`).
  server.on(opts.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    const subject = rateLimitSubject(socket.remoteAddress ?? '');
    let set = waiting.get(subject);
    if (!set) waiting.set(subject, (set = new Set()));
    if (set.size >= opts.perAddress) {
      opts.logger.debug({ waiting: set.size }, 'connection refused: too many from one address still sending headers');
      socket.destroy();
      return;
    }
    set.add(socket);
    subjectOf.set(socket, subject);
    socket.once('close', () => release(socket));
  });
  const arrived = (req: { socket: Socket }) => release(req.socket);
  server.on('request', arrived);
  server.on('upgrade', arrived);
  return { waiting: (subject) => waiting.get(subject)?.size ?? 0 };
}

/**
 * Fastify's `clientErrorHandler`: what Node cuts before any route runs (a request too slow, headers too
 * large, bytes that are not HTTP) is answered in the relay's error shape, `{ok: false, error, code}`.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, phrase, code, error] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'request_timeout', 'the request did not arrive in time (headers or body too slow)']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'the request headers are too large']
        : [400, 'Bad Request', 'bad_request', 'the request is not valid HTTP'];
  const body = JSON.stringify({ ok: false, error, code });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${phrase}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
