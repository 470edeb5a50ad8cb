import { FileEventStore, SnapshotStore } from '@svc/events';
import * as path from 'node:path';
import type { StoreFactory } from './command-loop';

/** The embedded default: the hash-chained JSON-lines log under `<relayDir>/events/`, snapshots beside it. */
export function fileStore(relayDir: string, segmentBytes: number): StoreFactory {
  return ({ onDurable, onFatal, mac, snapshotCipher }) => ({
    store: new FileEventStore({ dir: path.join(relayDir, 'events'), segmentBytes, onDurable, onFatal }),
    snapshots: new SnapshotStore(path.join(relayDir, 'snapshots'), mac, 2, snapshotCipher),
  });
}
