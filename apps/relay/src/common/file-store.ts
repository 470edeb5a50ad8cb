import { FileEventStore } from '@svc/events';
import * as path from 'node:path';
import type { StoreFactory } from './command-loop';

/** The embedded default: the hash-chained JSON-lines log under `<relayDir>/events/`. */
export function fileStore(relayDir: string, segmentBytes: number): StoreFactory {
  return ({ onDurable, onFatal }) => new FileEventStore({ dir: path.join(relayDir, 'events'), segmentBytes, onDurable, onFatal });
}
