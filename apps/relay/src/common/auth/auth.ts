import { createParamDecorator, ExecutionContext, applyDecorators } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { Principal } from '@svc/domain';
import type { FastifyRequest } from 'fastify';

/**
 * The spec's authentication classes (section 5), with authority resting on a credential, never on a
 * position (issue 34): a same-host proxy or tunnel makes the whole world loopback.
 * - `public`: anyone.
 * - `operator`: the operator's own surfaces (the console API and its actions, mint approvals, the store's jobs,
 *   recordings, metrics...): a loopback request that also carries the operator key (`X-Operator-Key`,
 *   `Authorization: Bearer <key>`) or the console's sign-in cookie.
 * - `platform`: the spec's loopback routes that the reference host tools call with no credential
 *   (docs/COMPATIBILITY.md lists them): any loopback request while RELAY_LOOPBACK_TRUST=loopback (the
 *   default); with `key`, the operator key or a paired bearer too.
 * - `paired`: a session bearer (with `grant`).
 * - `platform-or-paired`, `operator-or-paired`: the loopback class above, or else a session bearer.
 * - `voice`: Paired with the grant, or API voice: the API bearer (`API_SERVER_KEY`), accepted on the voice
 *   routes only (spec 5 rules 2-3).
 * - `console-sign-in`: a loopback request whose one-time sign-in link the handler itself checks (the one
 *   route that turns a link into the console's cookie).
 */
export type AuthClass = 'public' | 'operator' | 'platform' | 'paired' | 'platform-or-paired' | 'operator-or-paired' | 'voice' | 'console-app';

export type RouteAuth = {
  auth: AuthClass;
  grant?: string;
  bodyLimit?: number;
  noHead?: boolean;
  bearerOnLoopback?: boolean;
  /** `voice` class: a loopback request with the operator key and no bearer is the operator (relay-wide voice settings). */
  operatorOnLoopback?: boolean;
  /** The route takes multipart bodies: @fastify/multipart's request hooks run on it (media.module.ts). */
  multipart?: boolean;
  /** Its refusals are one line of text to a client that takes no JSON (http-errors.ts `takesJson`). */
  plainRefusals?: boolean;
};

/**
 * `@Auth('paired', 'chat')`: checked in a Fastify onRequest hook, before the body is even read.
 * `options.bodyLimit` raises (or lowers) this route's body limit above the global one; Fastify applies
 * it per route, and only after auth passed is a byte of the body read. `options.noHead` refuses HEAD
 * (405) on a GET route whose handler acts rather than reads.
 */
export function Auth(auth: AuthClass, grant?: string, options: Omit<RouteAuth, 'auth' | 'grant'> = {}): MethodDecorator & ClassDecorator {
  return applyDecorators(RouteConfig({ auth, grant, ...options } satisfies RouteAuth));
}

export type AuthedRequest = FastifyRequest & { principal?: Principal; peerIp?: string };

/** The caller the auth hook established (`operator` on loopback routes). */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const req = ctx.switchToHttp().getRequest<AuthedRequest>();
  if (!req.principal) throw new Error('route reached without a principal: missing @Auth()');
  return req.principal;
});

/** The TCP peer address (never a forwarded header). */
export const PeerIp = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  return ctx.switchToHttp().getRequest<AuthedRequest>().peerIp ?? 'unknown';
});
