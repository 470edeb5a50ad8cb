import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { ImageActivityStatus, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableImageActivityEntry = {
  callId: string;
  status: ImageActivityStatus;
  progress: number | null;
  errorCode: string | null;
  at: number;
  seq: number;
};
type SessionActivity = { sessionId: string; entries: MutableImageActivityEntry[]; last: number };

/** One image-generation status of a call; read-only outside this projection. */
export type ImageActivityEntry = DeepReadonly<MutableImageActivityEntry>;

export const IMAGE_ENTRIES_PER_SESSION = 200;
export const IMAGE_SESSIONS_KEPT = 500;

/** Image-generation lifecycle per chat session. Ephemeral: resets at `relay.started`. */
export class ImageActivityProjection implements Projection<{ sessions: SessionActivity[] }> {
  private readonly sessions = new Map<string, SessionActivity>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.sessions.clear();
        break;
      case 'chat.image_activity': {
        const at = eventAtMs(e);
        let s = this.sessions.get(e.data.sessionId);
        if (s && s.entries.some((x) => x.seq >= e.seq)) break;
        if (s) this.sessions.delete(e.data.sessionId);
        else s = { sessionId: e.data.sessionId, entries: [], last: at };
        // Re-inserted: the map's order is least recently active first.
        this.sessions.set(s.sessionId, s);
        s.last = at;
        s.entries.push({ callId: e.data.callId, status: e.data.status, progress: e.data.progress, errorCode: e.data.errorCode, at, seq: e.seq });
        if (s.entries.length > IMAGE_ENTRIES_PER_SESSION) s.entries.splice(0, s.entries.length - IMAGE_ENTRIES_PER_SESSION);
        if (this.sessions.size > IMAGE_SESSIONS_KEPT) this.sessions.delete(this.sessions.keys().next().value as string);
        break;
      }
      default:
        break;
    }
  }

  /** Entries of one session after `sinceMs` (exclusive), oldest first. */
  forSession(sessionId: string, sinceMs: number | null): readonly ImageActivityEntry[] {
    const s = this.sessions.get(sessionId);
    if (!s) return [];
    return sinceMs === null ? [...s.entries] : s.entries.filter((x) => x.at > sinceMs);
  }

  /** The last status seen for a call, if any. */
  callStatus(sessionId: string, callId: string): ImageActivityStatus | undefined {
    const s = this.sessions.get(sessionId);
    if (!s) return undefined;
    for (let i = s.entries.length - 1; i >= 0; i--) if (s.entries[i].callId === callId) return s.entries[i].status;
    return undefined;
  }

  snapshot(): { sessions: SessionActivity[] } {
    return { sessions: [...this.sessions.values()].map((s) => ({ ...s, entries: s.entries.map((x) => ({ ...x })) })) };
  }

  restore(state: { sessions: SessionActivity[] }): void {
    this.sessions.clear();
    for (const s of state.sessions) this.sessions.set(s.sessionId, s);
  }
}
