import { isoMs } from './epoch';
import type { StoredEvent } from '@svc/events';

let lastEvent: StoredEvent | null = null;
let lastMs = 0;

/**
 * `isoMs(event.at)`, parsed once per event: every projection of both read-model sets asks for the
 * same event's time in a row, and stored events never change.
 */
export function eventAtMs(event: StoredEvent): number {
  if (event !== lastEvent) {
    lastMs = isoMs(event.at);
    lastEvent = event;
  }
  return lastMs;
}
