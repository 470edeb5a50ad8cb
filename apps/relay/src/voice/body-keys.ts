import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * The keys the JSON body named, as sent. The relay-wide pipe drops the keys a DTO does not declare; the
 * bodies that have always refused an unknown key by name (a voice settings PATCH, `/relay/security`) read
 * them here. A custom parameter: the pipe does not touch it.
 */
export const BodyKeys = createParamDecorator((_: unknown, ctx: ExecutionContext): string[] => {
  const body = ctx.switchToHttp().getRequest<FastifyRequest>().body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
});
