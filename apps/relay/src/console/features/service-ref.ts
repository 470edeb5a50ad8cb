import type { ModuleRef } from '@nestjs/core';
import type { Type } from '@nestjs/common';

/**
 * The phone routes' services live in AppModule, which this module cannot import (it imports us).
 * Resolving them lazily from the container reuses the very same instances, so console commands go
 * through the same code, the same domain functions and the same events as the phone routes.
 */
export function serviceRef<T>(ref: ModuleRef, type: Type<T>): () => T {
  let cached: T | undefined;
  return () => {
    cached ??= ref.get(type, { strict: false });
    return cached as T;
  };
}
