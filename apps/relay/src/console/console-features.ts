import { Injectable } from '@nestjs/common';
import type { FeatureEntry } from '@svc/console-api';

/** A page of the console. The client shows a nav entry only for features the relay reports. */
export type ConsoleFeature = FeatureEntry;

/**
 * Which console pages this relay serves. Each feature's console controller adds itself when Nest
 * builds it, so a page appears exactly when its `/console/api/<feature>` route exists.
 */
@Injectable()
export class ConsoleFeatures {
  private readonly byId = new Map<string, ConsoleFeature>();

  add(feature: ConsoleFeature): void {
    this.byId.set(feature.id, feature);
  }

  list(): ConsoleFeature[] {
    return [...this.byId.values()].sort((a, b) => a.order - b.order);
  }
}
