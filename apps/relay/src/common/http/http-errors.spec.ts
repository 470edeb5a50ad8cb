import { BadRequestException, HttpException, NotFoundException } from '@nestjs/common';
import { DomainError, type ErrorKind } from '@svc/domain';
import { reasonPhraseOf, takesJson, toErrorResponse } from './http-errors';

describe('error bodies', () => {
  // Wire pins: the statuses of docs/DEVELOPING.md "Adding a feature" step 6 and docs/PROTOCOL.md "Error
  // codes" (spec 7 for 404/409/500; 422 reduction_only: PROTOCOL.md "Sessions"; 412 If-Match: "Profile files").
  it('maps every DomainError kind to its status with {ok: false, error, code} and the extra fields', () => {
    const expected: Record<ErrorKind, number> = {
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
    const answered = Object.fromEntries(
      Object.keys(expected).map((kind) => [kind, toErrorResponse(new DomainError('x.y', kind as ErrorKind, 'm')).status]),
    );
    expect(answered).toEqual(expected);
    const r = toErrorResponse(new DomainError('x.y', 'rate_limited', 'slow down', { retry_after: 5 }));
    expect(r).toEqual({ status: 429, body: { ok: false, error: 'slow down', code: 'x.y', retry_after: 5 } });
  });

  it('extra fields cannot overwrite ok, error or code', () => {
    const r = toErrorResponse(new DomainError('x.y', 'invalid', 'msg', { ok: true, code: 'other', error: 'other' }));
    expect(r.body).toMatchObject({ ok: false, code: 'x.y', error: 'msg' });
  });

  it('a wireError puts a code in error for clients that read it so, the sentence in message', () => {
    const r = toErrorResponse(new DomainError('profile.not_found', 'not_found', 'no profile "x"', { profile: 'x', wireError: 'profile_not_found' }));
    expect(r).toEqual({
      status: 404,
      body: { ok: false, error: 'profile_not_found', message: 'no profile "x"', code: 'profile.not_found', profile: 'x' },
    });
  });

  it('a reasonPhrase is the status line’s (printable ASCII, bounded), never the body’s; else the kind’s', () => {
    const e = new DomainError('bridge.implicit_intent', 'forbidden', 'name the app', {
      reason: 'x',
      reasonPhrase: 'Implicit intent refused\r\nX-Evil: 1 é',
    });
    expect(reasonPhraseOf(e)).toBe('Implicit intent refusedX-Evil: 1');
    expect(toErrorResponse(e).body).toEqual({ ok: false, error: 'name the app', code: 'bridge.implicit_intent', reason: 'x' });
    expect(reasonPhraseOf(new DomainError('a', 'forbidden', 'm', { reasonPhrase: 'y'.repeat(500) }))).toHaveLength(120);
    expect(reasonPhraseOf(new DomainError('a', 'needs_pairing', 'm'))).toBe('Extending needs a new pairing');
    expect(reasonPhraseOf(new DomainError('a', 'forbidden', 'm'))).toBeUndefined();
  });

  it('validation failures join their messages', () => {
    const r = toErrorResponse(new BadRequestException({ message: ['a must be x', 'b must be y'], error: 'Bad Request', statusCode: 400 }));
    expect(r).toEqual({ status: 400, body: { ok: false, error: 'a must be x; b must be y', code: 'validation_failed' } });
  });

  it.each<[number, string, string]>([
    [400, "Body is not valid JSON but content-type is set to 'application/json'", 'bad_json'],
    [400, "Body cannot be empty when content-type is set to 'application/json'", 'bad_json'],
    [413, 'Request body is too large', 'body_too_large'],
    [415, 'Unsupported Media Type', 'unsupported_media_type'],
    [414, "'/x' is exceeding the max param length", 'uri_too_long'],
  ])('Fastify’s own %i errors (as Nest wraps them) get stable codes', (status, message, code) => {
    const r = toErrorResponse(new HttpException(message, status));
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ ok: false, code });
    expect(r.body.error).not.toContain('/x');
  });

  it('unknown routes are a plain 404; anything unexpected is a 500 that says nothing about itself', () => {
    expect(toErrorResponse(new NotFoundException('Cannot GET /secret?token=abc'))).toEqual({
      status: 404,
      body: { ok: false, error: 'no such route', code: 'not_found' },
    });
    const r = toErrorResponse(new Error('database password is hunter2'));
    expect(r).toEqual({ status: 500, body: { ok: false, error: 'internal error; see the relay log', code: 'internal' } });
  });
});

describe('takesJson (who gets a plain-text refusal on a route that offers one)', () => {
  it('no Accept, */*, application/*, application/json or a +json type with a quality above 0 take JSON', () => {
    for (const a of [undefined, '', '*/*', 'application/*', 'application/json', 'audio/mpeg, application/json;q=0.5', 'application/problem+json'])
      expect(takesJson(a)).toBe(true);
  });

  it('audio/mpeg alone (the app and the desktop CLI on /voice/synthesize), text/plain, or JSON at q=0 do not', () => {
    for (const a of ['audio/mpeg', 'text/plain', 'audio/*', 'application/json;q=0', 'image/*, */*;q=0']) expect(takesJson(a)).toBe(false);
  });
});
