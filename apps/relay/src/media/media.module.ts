import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { fastifyMultipart } from '@fastify/multipart';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { RelayConfig } from '../common/config/relay-config';
import { MEDIA_REGISTRAR } from '../common/media-registrar';
import type { RouteAuth } from '../common/auth/auth';
import { registerWithRouteHooks } from '../common/http/route-scoped-plugin';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { MediaController } from './media.controller';
import { MediaService } from './media.service';

/** JSON upload body limit: the base64 of a file at the cap, plus room for the other fields. */
export function uploadBodyLimit(maxSizeBytes: number): number {
  return Math.ceil(maxSizeBytes / 3) * 4 + 64 * 1024;
}

/**
 * Fastify-level wiring Nest has no decorator for. Runs while providers are built, before Nest
 * registers routes: `onRoute` gives `POST /media/upload` its own bodyLimit (the JSON base64 form is
 * bigger than the global 1 MiB), and @fastify/multipart is registered for the streamed form: its parser and request
 * methods on the whole instance, its two async request hooks only on the routes marked `multipart` (the media and
 * voice uploads), not on every request.
 */
@Injectable()
export class MediaHttpSetup {
  constructor(adapterHost: HttpAdapterHost, @Inject(RELAY_CONFIG) config: RelayConfig) {
    const instance = adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const limit = uploadBodyLimit(config.media.maxSizeBytes);
    instance.addHook('onRoute', (route: RouteOptions) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (route.url === '/media/upload' && methods.includes('POST')) route.bodyLimit = limit;
    });
    registerWithRouteHooks(
      instance,
      fastifyMultipart,
      { limits: { fileSize: config.media.maxSizeBytes, files: 1, fields: 8, parts: 9 } },
      (route) => (route.config as Partial<RouteAuth> | undefined)?.multipart === true,
    );
  }
}

@Global()
@Module({
  controllers: [MediaController],
  providers: [MediaHttpSetup, MediaService, { provide: MEDIA_REGISTRAR, useExisting: MediaService }],
  exports: [MEDIA_REGISTRAR, MediaService],
})
export class MediaModule {}
