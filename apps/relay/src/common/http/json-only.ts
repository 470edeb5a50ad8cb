import type { IncomingHttpHeaders } from 'node:http';

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * ARCHITECTURE.md: loopback routes and the console take state-changing bodies only as `application/json`.
 * A browser sends text/plain, urlencoded and multipart bodies cross-site without a preflight, and bodies
 * with no Content-Type at all (`fetch` with bytes or a Blob); JSON it cannot. GET, HEAD and OPTIONS carry
 * no body to guard, whatever their headers say. Checked before the body is read, so no parser a later
 * feature registers can ever see such a body.
 *
 * A request with neither a body nor a type passes only where `bodiless` is `'allowed'`: the operator
 * routes, which real clients call so (the desktop CLI's `DELETE /phone/outbound`, a host's
 * `POST /media/{token}/sensitive`). The console's API refuses it: its one client always sends JSON.
 */
export function refusesAsNotJson(method: string, headers: IncomingHttpHeaders, bodiless: 'allowed' | 'refused'): boolean {
  if (SAFE_METHODS.has(method)) return false;
  const type = headers['content-type'];
  if (type === undefined) return bodiless === 'refused' || hasBody(headers);
  return type.split(';')[0].trim().toLowerCase() !== 'application/json';
}

/** Fastify's and Node's test: a body comes with a Transfer-Encoding, or a Content-Length other than 0. */
function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
