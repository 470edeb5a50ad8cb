import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { DomainError, type ErrorKind } from '@svc/domain';
import { MAX_JSON_DEPTH } from '@svc/events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { RouteAuth } from '../auth/auth';

export const STATUS_OF: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  needs_pairing: 422,
  gone: 410,
  too_large: 413,
  unsupported: 415,
  rate_limited: 429,
  unavailable: 503,
  upstream: 502,
  timeout: 504,
  not_configured: 500,
  precondition_failed: 412,
};

/**
 * HTTP/1.1 reason phrases other than the standard one. The app shows a PATCH refusal it has no message
 * for as `HTTP <status>: <reason phrase>` (RelayHttpClient.extendSession), so this phrase is what the
 * operator reads on the phone.
 */
export const REASON_PHRASE_OF: Readonly<Partial<Record<ErrorKind, string>>> = {
  needs_pairing: 'Extending needs a new pairing',
};

/**
 * The status line's reason phrase: the error's own (`extra.reasonPhrase`, for clients that show only the
 * status line, as python requests' raise_for_status does: "403 Client Error: <phrase> for url: ..."), else
 * its kind's. Printable ASCII only (Node refuses anything else in a status line), at most 120 characters.
 */
export function reasonPhraseOf(e: DomainError): string | undefined {
  const own =
    typeof e.extra.reasonPhrase === 'string'
      ? e.extra.reasonPhrase
          .replace(/[^\x20-\x7e]/g, '')
          .trim()
          .slice(0, 120)
      : '';
  return own || REASON_PHRASE_OF[e.kind];
}

export type ErrorBody = { ok: false; error: string; code: string } & Record<string, unknown>;

const FASTIFY_CODES: Record<string, { code: string; error: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'body_too_large', error: 'request body is larger than this route accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', error: 'send the body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'bad_content_length', error: 'Content-Length does not match the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'bad_json', error: 'the body is empty but Content-Type says JSON' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'bad_json', error: 'the body is not valid JSON' },
  FST_ERR_CTP_EMPTY_TYPE: { code: 'unsupported_media_type', error: 'the Content-Type header is empty' },
  FST_ERR_CTP_INVALID_TYPE: { code: 'unsupported_media_type', error: 'the Content-Type header is invalid' },
  FST_ERR_BAD_URL: { code: 'bad_url', error: 'the URL is not valid (bad percent-encoding)' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'uri_too_long', error: 'a path segment of the URL is too long' },
  json_too_deep: { code: 'json_too_deep', error: `the body nests JSON deeper than ${MAX_JSON_DEPTH} levels` },
};

function fastifyErrorByStatus(status: number, message: string): { code: string; error: string } | undefined {
  if (status === 400 && /json/i.test(message)) {
    return /empty/i.test(message) ? FASTIFY_CODES.FST_ERR_CTP_EMPTY_JSON_BODY : FASTIFY_CODES.FST_ERR_CTP_INVALID_JSON_BODY;
  }
  if (status === 413) return FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE;
  if (status === 415) return FASTIFY_CODES.FST_ERR_CTP_INVALID_MEDIA_TYPE;
  if (status === 414) return FASTIFY_CODES.FST_ERR_MAX_PARAM_LENGTH;
  return undefined;
}

/** Turns anything thrown into the one error shape `{ok: false, error, code}` with the right status. */
export function toErrorResponse(exception: unknown): { status: number; body: ErrorBody } {
  if (exception instanceof DomainError) {
    // A client that reads `error` as a code (the app's profile routes: RelayHttpClient.kt 463-481) gets
    // that code there (`extra.wireError`), and the sentence moves to `message`. `reasonPhrase` is the
    // status line's (reasonPhraseOf), never a body field.
    const { wireError, reasonPhrase: _, ...extra } = exception.extra;
    const wireCode = typeof wireError === 'string' ? wireError : null;
    return {
      status: STATUS_OF[exception.kind],
      body: {
        ...extra,
        ok: false,
        error: wireCode ?? exception.message,
        ...(wireCode ? { message: exception.message } : {}),
        code: exception.code,
      },
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const res = exception.getResponse();
    // Nest turns Fastify's own errors (body parsing, limits) into an HttpException holding only the
    // message and status; name them by status so clients get the same codes as FASTIFY_CODES.
    if (typeof res === 'string') {
      const known = fastifyErrorByStatus(status, res);
      if (known) return { status, body: { ok: false, ...known } };
    }
    const raw = typeof res === 'object' && res !== null ? (res as { message?: unknown }).message : res;
    const message = Array.isArray(raw) ? raw.join('; ') : typeof raw === 'string' ? raw : exception.message;
    const code = status === 404 ? 'not_found' : status === 400 ? 'validation_failed' : status === 413 ? 'body_too_large' : `http_${status}`;
    return { status, body: { ok: false, error: status === 404 ? 'no such route' : message, code } };
  }
  const err = exception as { statusCode?: number; code?: string; message?: string };
  if (typeof err?.code === 'string' && FASTIFY_CODES[err.code]) {
    const known = FASTIFY_CODES[err.code];
    return { status: err.statusCode ?? 400, body: { ok: false, ...known } };
  }
  if (typeof err?.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return { status: err.statusCode, body: { ok: false, error: 'bad request', code: err.code?.toLowerCase() ?? 'bad_request' } };
  }
  return { status: 500, body: { ok: false, error: 'internal error; see the relay log', code: 'internal' } };
}

@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = toErrorResponse(exception);
    // A peer that did not answer (502/503/504 the relay chose) is a warning with its message; anything
    // else at 500 or above is a fault of the relay's own, logged with its stack.
    if (exception instanceof DomainError && [502, 503, 504].includes(status))
      this.logger.warn({ code: exception.code, reason: exception.message }, 'request refused: a peer is unavailable');
    else if (status >= 500) this.logger.error({ err: scrub(exception) }, 'request failed');
    if (reply.sent) return;
    if ((status === 429 || status === 503) && typeof body.retry_after === 'number') reply.header('Retry-After', String(body.retry_after));
    const phrase = exception instanceof DomainError ? reasonPhraseOf(exception) : undefined;
    if (phrase) reply.raw.statusMessage = phrase;
    const req = host.switchToHttp().getRequest<FastifyRequest>();
    if ((req.routeOptions?.config as Partial<RouteAuth> | undefined)?.plainRefusals && !takesJson(req.headers.accept))
      return void reply.status(status).header('Cache-Control', 'no-store').type('text/plain; charset=utf-8').send(`${body.error} (${body.code})\n`);
    void reply.status(status).header('Cache-Control', 'no-store').send(body);
  }
}

/**
 * Whether a client takes a JSON answer: no `Accept` (or an empty one), or a range that admits
 * `application/json` with a quality above 0. The phone app's `/voice/synthesize` asks `audio/mpeg` only and
 * shows an error's body as it is (RelayVoiceClient.kt 279-283, 2657-2674): a route that says so
 * (`plainRefusals`) answers such a client one line of text, `<message> (<code>)`.
 */
export function takesJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) return false;
    return type === '*/*' || type === 'application/*' || type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type);
  });
}

/** Errors are logged by name, message and stack only: never a request body or header. */
function scrub(e: unknown): Record<string, unknown> {
  if (e instanceof Error) return { name: e.name, message: e.message, stack: e.stack };
  return { value: typeof e };
}

/**
 * Fastify answers some URL errors before any route or Nest filter runs, echoing the path; this gives
 * them the relay's error shape instead (`frameworkErrors`).
 */
export function frameworkErrors(error: Error, _req: unknown, reply: FastifyReply): void {
  const { status, body } = toErrorResponse(error);
  void reply.status(status).header('Cache-Control', 'no-store').send(body);
}
