import * as path from 'node:path';
import type { StoredEvent } from './event';
import type { ScanProgress } from './event-store';
import { scanLog } from './file/file-read';
import type { Projection } from './projection';
import { unsealPersonal } from './personal-data';
import { eventSchemas } from './event-schema';

export type ReplaySummary = {
  lastSeq: number;
  lastHash: string;
  events: number;
  countsByType: Record<string, number>;
  tornTailBytes: number;
};

/**
 * Rebuilds read models from a log directory, from seq 1, verifying the chain on the way (an auditor's
 * replay never trusts a snapshot). Read-only: a torn tail is reported, not cut. Personal content is
 * opened with `keyFor` (the home's data keys), and replays as forgotten where a key is gone.
 */
export function replayLog<M extends Projection>(
  dir: string,
  models: M,
  onEvent?: (e: StoredEvent) => void,
  onProgress?: (p: ScanProgress) => void,
  /** The data keys of personal content (without them, or without one, that content replays as forgotten). */
  keyFor: (keyId: string) => Buffer | undefined = () => undefined,
): ReplaySummary {
  const counts = new Map<string, number>();
  let events = 0;
  const r = scanLog(dir, {
    fromSeq: 1,
    onProgress,
    onEvent: (record) => {
      const e = eventSchemas.upcast(unsealPersonal(record, keyFor));
      models.apply(e);
      counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
      events++;
      onEvent?.(e);
    },
  });
  return { lastSeq: r.lastSeq, lastHash: r.lastHash, events, countsByType: Object.fromEntries(counts), tornTailBytes: r.torn?.bytes ?? 0 };
}

export function eventsDir(svcHome: string): string {
  return path.join(svcHome, 'relay', 'events');
}
