import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { STANDBY_RETRY_AFTER_S, standbyError } from '../common/loop/command-loop';

/** What a standby answers in place of a write: the error body every refusal has (`ok`, `error`, `code`) and its wait. */
export function standbyBody(): string {
  const e = standbyError();
  return JSON.stringify({ ok: false, error: e.message, code: e.code, retry_after: STANDBY_RETRY_AFTER_S });
}

/** Methods a standby serves: reads (the console's pages, /health, the event log). */
const READS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A standby refuses every write before routing, authentication or a body is read: 503 `relay.standby`
 * with Retry-After (a client backs off and tries again, by then maybe on the new leader). A read that
 * would record something (a media fetch) is refused by the command loop with the same error.
 */
export function installStandbyHook(instance: FastifyInstance, isStandby: () => boolean): void {
  instance.addHook('onRequest', (request, reply, done) => {
    if (READS.has(request.method) || !isStandby()) return done();
    void reply
      .code(503)
      .header('Retry-After', String(STANDBY_RETRY_AFTER_S))
      .header('Cache-Control', 'no-store')
      .type('application/json; charset=utf-8')
      .send(standbyBody());
  });
}

/**
 * The WebSocket upgrade on a standby (phone sockets, voice, the desktop CLI): a plain 503 with Retry-After
 * before any 101, so a client sees an HTTP refusal, not a socket that opens and closes. True: refused.
 */
export function standbyUpgradeRoute(isStandby: () => boolean): (req: IncomingMessage, socket: Duplex) => boolean {
  return (_req, socket) => {
    if (!isStandby()) return false;
    const body = standbyBody();
    socket.end(
      `HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${STANDBY_RETRY_AFTER_S}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    return true;
  };
}
