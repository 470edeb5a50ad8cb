import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { ClipboardStaged, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableClipboardEntry = Omit<ClipboardStaged['data'], 'staleAt' | 'supersedes'> & { stagedAt: number; staleAt: number };

/** A staged clipboard image, its times as epoch ms; read-only outside this projection. */
export type ClipboardEntry = DeepReadonly<MutableClipboardEntry>;

/**
 * Images waiting in the paste inbox (unread, not yet stale). Survives a restart: the files do too, and
 * the sweep still discards them on time.
 */
export class ClipboardProjection implements Projection<{ entries: MutableClipboardEntry[] }> {
  private readonly entries = new Map<string, MutableClipboardEntry>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'clipboard.staged': {
        const d = e.data;
        for (const id of d.supersedes) this.entries.delete(id);
        this.entries.set(d.entryId, {
          entryId: d.entryId,
          fileName: d.fileName,
          format: d.format,
          sizeBytes: d.sizeBytes,
          sha256: d.sha256,
          tokenPrefix: d.tokenPrefix,
          stagedAt: eventAtMs(e),
          staleAt: isoMs(d.staleAt),
        });
        break;
      }
      case 'clipboard.consumed':
      case 'clipboard.discarded':
        this.entries.delete(e.data.entryId);
        break;
      default:
        break;
    }
  }

  /** Entries oldest first. */
  all(): readonly ClipboardEntry[] {
    return [...this.entries.values()];
  }

  get(entryId: string): ClipboardEntry | undefined {
    return this.entries.get(entryId);
  }

  /** The newest entry that is not stale at `now`. */
  latestFresh(now: Date): ClipboardEntry | undefined {
    const fresh = this.all().filter((x) => x.staleAt > now.getTime());
    return fresh[fresh.length - 1];
  }

  snapshot(): { entries: MutableClipboardEntry[] } {
    return { entries: this.all().map((x) => ({ ...x })) };
  }

  restore(state: { entries: MutableClipboardEntry[] }): void {
    this.entries.clear();
    for (const x of state.entries) this.entries.set(x.entryId, x);
  }
}
