import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import type * as Swagger from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import type { RouteAuth } from '../common/auth';

/**
 * `GET /openapi.json` (issue 16, loopback): an OpenAPI 3 description generated from the controllers (their
 * paths, methods and parameters, as Nest knows them), with the few plain Fastify routes (`/health`, this
 * one) added beside them. `test/e2e/openapi.e2e-spec.ts` fails when a registered route is missing from it.
 */
export function openApiDocument(app: NestFastifyApplication, version: string): OpenAPIObject {
  // Loaded by the first request for the description, not at the relay's start (issue 12's start-up budget).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DocumentBuilder, SwaggerModule } = require('@nestjs/swagger') as typeof Swagger;
  const doc = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('svc relay')
      .setDescription(
        'The relay beside an agent host: pairing, the phone socket, Device Control, media, voice, Threads and the rest (see docs/PROTOCOL.md)',
      )
      .setVersion(version)
      .build(),
  );
  doc.paths['/health'] = {
    get: {
      summary: 'Public liveness and counts (spec 4.1), with the Secure Link state',
      responses: { '200': { description: 'ok' } },
      tags: ['health'],
    },
    head: { summary: 'Liveness', responses: { '200': { description: 'ok' } }, tags: ['health'] },
  } as OpenAPIObject['paths'][string];
  doc.paths['/openapi.json'] = {
    get: { summary: 'This description (loopback)', responses: { '200': { description: 'OpenAPI 3' } }, tags: ['operator'] },
  };
  // Every operation has a summary: a generated one names its controller method (`DesktopController.call`).
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item as Record<string, { summary?: string; operationId?: string }>))
      if (op && typeof op === 'object' && !op.summary && op.operationId) op.summary = op.operationId.replace('_', '.');
  return doc;
}

export function installOpenApiRoute(app: NestFastifyApplication, instance: FastifyInstance, version: string): void {
  let doc: OpenAPIObject | null = null;
  const config: RouteAuth = { auth: 'loopback' };
  instance.get('/openapi.json', { config }, async (_req, reply) => {
    doc ??= openApiDocument(app, version);
    void reply.header('cache-control', 'no-store');
    return doc;
  });
}
