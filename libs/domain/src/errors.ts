/**
 * What kind of refusal an error is; the web edge maps each kind to one HTTP status and a WebSocket
 * `system/error` frame. The domain never speaks HTTP.
 */
export type ErrorKind =
  | 'invalid' // 400
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'method_not_allowed' // 405
  | 'conflict' // 409
  | 'needs_pairing' // 422: only a new pairing can grant this (PATCH extending a session)
  | 'gone' // 410
  | 'too_large' // 413
  | 'unsupported' // 415
  | 'rate_limited' // 429
  | 'unavailable' // 503
  | 'upstream' // 502
  | 'timeout' // 504
  | 'not_configured' // 500: the relay lacks what the operator must configure (spec 7: a voice provider's API key)
  | 'precondition_failed'; // 412: an If-Match that no longer matches (a profile file changed since it was read)

export class DomainError extends Error {
  constructor(
    /** Stable machine code, e.g. `sessions.ambiguous_prefix`. */
    readonly code: string,
    readonly kind: ErrorKind,
    message: string,
    /**
     * Route-specific fields the spec names (`reason`, `error_code`...). Never secrets. A `wireError` string
     * here replaces the message in the body's `error` (for clients that read it as a code); the message
     * then goes in `message`.
     */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
