import { FastifyAdapter } from '@nestjs/platform-fastify';
import { jsonDepthExceeds, JsonTooDeepError, MAX_JSON_DEPTH } from '@svc/events';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import type { RelayConfig } from '../config/relay-config';
import { dialHost } from '../config/hosts';
import { frameworkErrors } from './http-errors';
import { clientErrorHandler, guardSlowConnections, serverTimeouts } from './slow-clients';
import { TLS_LISTENER_OPTIONS } from './tls-policy';

/**
 * The relay's Fastify, hardened: explicit request, header and connection timeouts (Fastify 5 leaves
 * `requestTimeout` at 0), the global body limit, no proxy trust, TLS when configured (TLS_LISTENER_OPTIONS). Every route is
 * listed in `routes` as Fastify registers it.
 */
export function relayHttpAdapter(config: RelayConfig): { adapter: FastifyAdapter; routes: Array<{ method: string; url: string }> } {
  const adapter = new FastifyAdapter({
    // No Nest middleware anywhere (auth is a Fastify hook): without middie, no request pays for its hook.
    skipMiddie: true,
    trustProxy: false,
    bodyLimit: config.bodyLimitBytes,
    // Fastify sets this on the server after creating it; never below the headers bound (Node's rule).
    requestTimeout: Math.max(config.requestTimeoutMs, config.headersTimeoutMs),
    connectionTimeout: 120_000,
    clientErrorHandler,
    frameworkErrors,
    // No route has a Fastify schema (bodies are DTOs): the validator and serializer compilers (ajv, 90
    // modules, ~70 ms of start-up) load only if one ever does.
    schemaController: { compilersFactory: lazyCompilers() },
    ...(config.tls
      ? {
          https: {
            cert: fs.readFileSync(config.tls.cert),
            key: fs.readFileSync(config.tls.key),
            ...TLS_LISTENER_OPTIONS,
            ...serverTimeouts(config.headersTimeoutMs, config.requestTimeoutMs),
          },
        }
      : { http: serverTimeouts(config.headersTimeoutMs, config.requestTimeoutMs) }),
  });
  // Every route as Fastify registers it: what the OpenAPI description is checked against.
  const routes: Array<{ method: string; url: string }> = [];
  adapter.getInstance().addHook('onRoute', (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) routes.push({ method: m, url: r.url });
  });
  return { adapter, routes };
}

type Compilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** Fastify's default schema compilers, required on first use (resolved from Fastify's own location). */
export function lazyCompilers(): Compilers {
  const fromFastify = createRequire(require.resolve('fastify'));
  const lazy = (name: string) => {
    let build: ((...a: unknown[]) => unknown) | null = null;
    return (...a: unknown[]) => (build ??= (fromFastify(name) as () => (...a: unknown[]) => unknown)())(...a);
  };
  return { buildValidator: lazy('@fastify/ajv-compiler'), buildSerializer: lazy('@fastify/fast-json-stringify-compiler') } as unknown as Compilers;
}

/** What the server takes, before any route runs: JSON bodies only (bounded in depth), and a cap on slow connections per address. */
export function hardenHttpServer(instance: FastifyInstance, config: RelayConfig, logger: Logger): void {
  instance.removeContentTypeParser('text/plain');
  guardSlowConnections(instance.server, { perAddress: config.maxSlowConnectionsPerAddress, tls: Boolean(config.tls), logger });
  installBoundedJsonParser(instance);
}

/** Nest adds a form parser at init; the relay's bodies are JSON (or multipart where a route registers it). */
export function dropFormParser(instance: FastifyInstance): void {
  if (instance.hasContentTypeParser('application/x-www-form-urlencoded')) instance.removeContentTypeParser('application/x-www-form-urlencoded');
}

/** The URL the relay answers on, for tests and the CLI: a wildcard host is reached on 127.0.0.1. */
export function listeningUrl(config: Pick<RelayConfig, 'tls' | 'host'>, port: number): string {
  return `${config.tls ? 'https' : 'http'}://${dialHost(config.host)}:${port}`;
}

/**
 * Fastify's own JSON parser (prototype-poisoning checks kept), behind a nesting check on the raw text: a
 * body nested past MAX_JSON_DEPTH is a 400 `json_too_deep` before anything walks it recursively.
 */
function installBoundedJsonParser(instance: FastifyInstance): void {
  const parse = instance.getDefaultJsonParser('error', 'error');
  instance.removeContentTypeParser('application/json');
  instance.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (jsonDepthExceeds(text)) return done(new JsonTooDeepError(MAX_JSON_DEPTH), undefined);
    void parse(req, text, done);
  });
}
