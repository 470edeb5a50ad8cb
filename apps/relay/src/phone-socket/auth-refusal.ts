import { DomainError, type ErrorKind } from '@svc/domain';
import type { Logger } from 'pino';
import { CLOSE } from './envelope';
import type { PhoneConnection } from './phone-connection';

/** Refusals that say "not now" rather than "not you": the credential may be fine; the client should come back. */
const TRANSIENT: ReadonlySet<ErrorKind> = new Set(['rate_limited', 'unavailable', 'conflict']);

/** When a transient refusal names no wait of its own (the disk guard's reads come every few seconds; HTTP says 60). */
const DEFAULT_RETRY_SECONDS = 60;

/**
 * A `system/auth` that a decision refused (the disk guard, an event or reconnect budget, a token collision)
 * or that failed outright: an `auth.fail` with its code, and the socket closed; never an unanswered socket
 * waiting for its 30 s deadline, never a `system/error`.
 *
 * A transient refusal carries `retry_after` and closes 1013 (RFC 6455 "Try Again Later"), and its reason
 * reads as an authentication timeout: that is the only `auth.fail` after which the phone app keeps its
 * session and reconnects (app auth/AuthManager.kt:171-179 shouldPreservePairedSessionOnAuthFail); any other
 * reason sends it to "Needs re-pair" (:1319) and stops its reconnects (hasPairContext, :572-575). The desktop
 * CLI treats every `auth.fail` as final and exits for its service manager to restart it
 * (desktop/src/transport/RelayTransport.ts:785-793), keeping its token.
 */
export function refuseAuth(conn: PhoneConnection, err: unknown, logger: Logger): void {
  if (conn.closed) return;
  if (err instanceof DomainError && TRANSIENT.has(err.kind)) {
    const wait = typeof err.extra.retry_after === 'number' ? err.extra.retry_after : DEFAULT_RETRY_SECONDS;
    conn.send('system', 'auth.fail', { reason: `authentication timeout: ${err.message}`, code: err.code, retry_after: wait });
    return conn.close(CLOSE.tryAgainLater, 'try again later');
  }
  if (err instanceof DomainError) return conn.failAuth(err.message, err.code);
  logger.error({ conn: conn.id, err: (err as Error).message }, 'phone auth failed unexpectedly');
  conn.send('system', 'auth.fail', {
    reason: 'authentication timeout: the relay could not finish this handshake; try again',
    code: 'internal',
    retry_after: 5,
  });
  conn.close(CLOSE.internalError, 'internal error');
}
