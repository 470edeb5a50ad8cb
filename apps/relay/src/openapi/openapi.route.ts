import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type * as Swagger from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import type { RouteAuth } from '../common/auth/auth';
import { getMetadataStorage } from '../common/http/validators';

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
  fillBodySchemas(doc, bodyClasses(app));
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

/**
 * Swagger names each DTO a body is read into but, without its own decorators on every field, leaves the
 * schema empty. The DTOs' class-validator decorators are the truth the relay validates with, so their
 * JSON Schemas are generated from that same metadata (class-validator-jsonschema) and put in place.
 */
function fillBodySchemas(doc: OpenAPIObject, classes: Map<string, Ctor>): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { validationMetadatasToSchemas } = require('class-validator-jsonschema') as typeof import('class-validator-jsonschema');
  const generated = validationMetadatasToSchemas({
    classValidatorMetadataStorage: getMetadataStorage(),
    refPointerPrefix: '#/components/schemas/',
  }) as Record<string, SchemaObject>;
  const schemas = (doc.components ??= {}).schemas ?? {};
  const empty = (name: string) => Object.keys((schemas[name] as SchemaObject | undefined)?.properties ?? {}).length === 0;
  for (const [name, schema] of Object.entries(generated)) if (empty(name)) schemas[name] = schema;
  // A DTO that only extends another (no decorators of its own) has no metadata: it is its ancestor.
  for (const name of Object.keys(schemas)) {
    if (!empty(name)) continue;
    for (
      let c = Object.getPrototypeOf(classes.get(name) ?? Object) as Ctor | null;
      c && c !== Function.prototype;
      c = Object.getPrototypeOf(c) as Ctor | null
    ) {
      if (generated[c.name]) {
        schemas[c.name] ??= generated[c.name];
        schemas[name] = { allOf: [{ $ref: `#/components/schemas/${c.name}` }] };
        break;
      }
    }
  }
  doc.components.schemas = schemas;
}

type Ctor = abstract new (...args: never[]) => unknown;

/** The classes the controllers' handlers take as parameters, by name (Nest's own route metadata). */
function bodyClasses(app: NestFastifyApplication): Map<string, Ctor> {
  const found = new Map<string, Ctor>();
  for (const mod of app.get(ModulesContainer).values()) {
    for (const wrapper of mod.controllers.values()) {
      const proto = (wrapper.metatype as { prototype?: object } | null)?.prototype;
      if (!proto) continue;
      for (const key of Object.getOwnPropertyNames(proto)) {
        const types = Reflect.getMetadata('design:paramtypes', proto, key) as unknown[] | undefined;
        for (const t of types ?? []) if (typeof t === 'function' && t.name) found.set(t.name, t as Ctor);
      }
    }
  }
  return found;
}

export function installOpenApiRoute(app: NestFastifyApplication, instance: FastifyInstance, version: string): void {
  let doc: OpenAPIObject | null = null;
  const config: RouteAuth = { auth: 'operator' };
  instance.get('/openapi.json', { config }, async (_req, reply) => {
    doc ??= openApiDocument(app, version);
    void reply.header('cache-control', 'no-store');
    return doc;
  });
}
