import { DomainError } from '@svc/domain';
import { createHash, timingSafeEqual } from 'node:crypto';
import type * as http from 'node:http';

/**
 * What `/api` requires: the API server's key (API_SERVER_KEY, which the pairing QR hands to phones) as the
 * request's bearer, checked here before a byte reaches the API server (its compatibility routes may not
 * check it themselves). Without a key the namespace is not served. `check` records the outcome with the
 * relay's rate limiter (keyed by the peer): it rejects a blocked peer with a DomainError and counts a
 * wrong key (`failed`) as a bad token; a missing bearer is refused without counting, as the relay does.
 */
export type ApiGate = { key: string | null; check?: (peer: string, failed: boolean) => Promise<void> };

const API_BEARER_RE = /^Bearer\s+(\S{1,1024})\s*$/i;

export type ApiRefusal = { status: number; code: string; error: string; extra?: Record<string, unknown> };

/**
 * The `/api` gate: null when the request may pass; otherwise the refusal (503 without a key on this
 * relay, 401 for a missing or wrong key, 429 while the peer is blocked).
 */
export async function apiRefusal(gate: ApiGate, req: http.IncomingMessage, peer: string): Promise<ApiRefusal | null> {
  const key = gate.key;
  if (!key)
    return {
      status: 503,
      code: 'secure_link.api_unauthenticated',
      error: 'Secure Link serves the API only while this relay holds its key (API_SERVER_KEY), which every request must carry as its bearer',
    };
  // The API server's health answers anyone, here as on its own port: the app probes it before it uses the
  // route (EndpointResolver: `GET <proxy>/api/health`, no credential). Only that exact request.
  if ((req.method === 'GET' || req.method === 'HEAD') && req.url === '/api/health') return null;
  const m = API_BEARER_RE.exec(req.headers.authorization ?? '');
  const ok = m !== null && sameSecret(m[1], key);
  try {
    if (gate.check) await gate.check(peer, m !== null && !ok);
    if (!ok) throw new DomainError('secure_link.api_unauthorized', 'unauthorized', 'send the API key as "Authorization: Bearer <key>"');
    return null;
  } catch (err) {
    const e = err instanceof DomainError ? err : new DomainError('secure_link.api_unauthorized', 'unauthorized', 'the API key was not accepted');
    return { status: e.kind === 'rate_limited' ? 429 : 401, code: e.code, error: e.message, extra: e.extra };
  }
}

/** Constant time (digests of equal length); neither value is ever logged. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());
}
