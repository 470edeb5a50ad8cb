import { createParamDecorator, ExecutionContext, applyDecorators } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { Principal } from '@svc/domain';
import type { FastifyRequest } from 'fastify';

/**
 * The spec's authentication classes (section 5). Every route declares one; start-up fails if a route
 * has none, so nothing is public by accident. `voice` is Paired with the grant, or API voice: the API
 * bearer (`API_SERVER_KEY`), accepted on the voice routes only (spec 5 rules 2-3).
 */
export type AuthClass = 'public' | 'loopback' | 'paired' | 'loopback-or-paired' | 'voice';

export type RouteAuth = {
  auth: AuthClass;
  grant?: string;
  bodyLimit?: number;
  noHead?: boolean;
  bearerOnLoopback?: boolean;
  /** `voice` class: a loopback request with no bearer is the operator (relay-wide voice settings). */
  operatorOnLoopback?: boolean;
  /** The route takes multipart bodies: @fastify/multipart's request hooks run on it (media.module.ts). */
  multipart?: boolean;
};

/**
 * `@Auth('paired', 'chat')`: checked in a Fastify onRequest hook, before the body is even read.
 * `options.bodyLimit` raises (or lowers) this route's body limit above the global one; Fastify applies
 * it per route, and only after auth passed is a byte of the body read. `options.noHead` refuses HEAD
 * (405) on a GET route whose handler acts rather than reads.
 */
export function Auth(
  auth: AuthClass,
  grant?: string,
  options: { bodyLimit?: number; noHead?: boolean; bearerOnLoopback?: boolean; operatorOnLoopback?: boolean; multipart?: boolean } = {},
): MethodDecorator & ClassDecorator {
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
