import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { MediaFile, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableMediaEntry = Omit<MediaFile, 'expiresAt'> & {
  source: 'register' | 'registrar' | 'upload';
  /** Upload form, for phone uploads. */
  via: 'multipart' | 'json' | null;
  registeredAt: number;
  /** Epoch ms. */
  expiresAt: number;
  fetchCount: number;
  lastFetchedAt: number | null;
  /** Seq of the last registration or fetch: the LRU order (lower = used longer ago). */
  usedSeq: number;
};

/** A registered media token's entry, read-only outside this projection. */
export type MediaEntry = DeepReadonly<MutableMediaEntry>;

type State = { entries: MutableMediaEntry[] };

/**
 * The media registry (spec 2.4). Ephemeral: `relay.started` empties it, so tokens never outlive the
 * run that issued them. Keyed by the token's digest; the token itself is never held.
 */
export class MediaProjection implements Projection<State> {
  private readonly byDigest = new Map<string, MutableMediaEntry>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.byDigest.clear();
        break;
      case 'media.registered':
      case 'media.uploaded': {
        const { expiresAt, ...file } = e.data;
        const at = eventAtMs(e);
        const entry: MutableMediaEntry = {
          tokenDigest: file.tokenDigest,
          tokenPrefix: file.tokenPrefix,
          path: file.path,
          contentType: file.contentType,
          fileName: file.fileName,
          size: file.size,
          fileId: file.fileId,
          owned: file.owned,
          sensitive: file.sensitive,
          source: e.type === 'media.uploaded' ? 'upload' : e.data.source,
          via: e.type === 'media.uploaded' ? e.data.via : null,
          registeredAt: at,
          expiresAt: isoMs(expiresAt),
          fetchCount: 0,
          lastFetchedAt: null,
          usedSeq: e.seq,
        };
        this.byDigest.set(entry.tokenDigest, entry);
        break;
      }
      case 'media.marked_sensitive': {
        const m = this.byDigest.get(e.data.tokenDigest);
        if (m) m.sensitive = true;
        break;
      }
      case 'media.fetched': {
        const m = e.data.tokenDigest === null ? undefined : this.byDigest.get(e.data.tokenDigest);
        // `usedSeq` doubles as a guard: the same fetch applied twice is counted once.
        if (m && e.seq > m.usedSeq) {
          m.fetchCount++;
          m.lastFetchedAt = eventAtMs(e);
          m.usedSeq = e.seq;
        }
        break;
      }
      case 'media.expired':
      case 'media.evicted':
        this.byDigest.delete(e.data.tokenDigest);
        break;
      default:
        break;
    }
  }

  byToken(tokenDigest: string): MediaEntry | undefined {
    return this.byDigest.get(tokenDigest);
  }

  /** Entries still within their lifetime at `now`. */
  live(now: Date): readonly MediaEntry[] {
    return this.all().filter((m) => isLiveMedia(m, now));
  }

  all(): readonly MediaEntry[] {
    return [...this.byDigest.values()];
  }

  count(): number {
    return this.byDigest.size;
  }

  /** Entries past their TTL whose `media.expired` is not written yet. */
  overdue(now: Date): readonly MediaEntry[] {
    return this.all().filter((m) => !isLiveMedia(m, now));
  }

  /** Least recently used first (registration or fetch). */
  leastRecentlyUsed(): readonly MediaEntry[] {
    return [...this.byDigest.values()].sort((a, b) => a.usedSeq - b.usedSeq);
  }

  /** How many entries name this owned file (0: it may be deleted). */
  holders(path: string): number {
    let n = 0;
    for (const m of this.byDigest.values()) if (m.owned && m.path === path) n++;
    return n;
  }

  ownedPaths(): readonly string[] {
    return [
      ...new Set(
        this.all()
          .filter((m) => m.owned)
          .map((m) => m.path),
      ),
    ];
  }

  snapshot(): State {
    return { entries: [...this.byDigest.values()].map((m) => ({ ...m })) };
  }

  restore(state: State): void {
    this.byDigest.clear();
    for (const m of state.entries ?? []) this.byDigest.set(m.tokenDigest, { ...m });
  }
}

export function isLiveMedia(m: MediaEntry, now: Date): boolean {
  return m.expiresAt > now.getTime();
}
