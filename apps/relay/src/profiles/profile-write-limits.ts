import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { RelayConfig } from '../common/config/relay-config';
import { RELAY_CONFIG } from '../common/auth/tokens';

/**
 * The body a profile file write may have: its cap of text, JSON-escaped at worst (a control character is
 * six bytes, `\u0001`), plus room for the other fields. Anything the cap allows is then taken, whatever it holds.
 */
export function profileWriteBodyLimit(maxBytes: number): number {
  return maxBytes * 6 + 64 * 1024;
}

/** The write routes, phone and console, and which cap each takes. */
const WRITE_ROUTES: Readonly<Record<string, 'soulMaxBytes' | 'memoryMaxBytes'>> = {
  '/api/profiles/:name/soul': 'soulMaxBytes',
  '/api/profiles/:name/memory/:filename': 'memoryMaxBytes',
  '/console/api/profiles/:name/soul': 'soulMaxBytes',
  '/console/api/profiles/:name/memory/:filename': 'memoryMaxBytes',
};

/**
 * The caps are settings (RELAY_PROFILE_*_MAX_BYTES), so the write routes' body limits cannot be written in
 * their `@Auth` decorators: `onRoute` gives each its own as Nest registers it (as media.module.ts does for
 * its upload). Runs while providers are built, before any route is registered.
 */
@Injectable()
export class ProfileWriteLimits {
  constructor(adapterHost: HttpAdapterHost, @Inject(RELAY_CONFIG) config: RelayConfig) {
    const instance = adapterHost.httpAdapter.getInstance<FastifyInstance>();
    instance.addHook('onRoute', (route: RouteOptions) => {
      const cap = WRITE_ROUTES[route.url];
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (cap && (methods.includes('PUT') || methods.includes('POST'))) route.bodyLimit = profileWriteBodyLimit(config.profileFiles[cap]);
    });
  }
}
