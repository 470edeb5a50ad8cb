import type { Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';

/** Live sign-in links and console sessions (digest -> expiry, epoch ms), oldest first. */
type State = { links: Array<[string, number]>; sessions: Array<[string, number]> };

/** At most this many unused links and signed-in browsers at once; the oldest gives way (the operator's own actions, but still bounded). */
export const MAX_CONSOLE_LINKS = 16;
export const MAX_CONSOLE_SESSIONS = 16;

/**
 * The console's one-time sign-in links and the browser sessions they became. Expired entries are dropped
 * as later events arrive, and each map keeps only its newest entries, so neither grows with time.
 * Survives a restart: a signed-in browser stays signed in, an unused link stays usable until it expires.
 */
export class ConsoleAccessProjection implements Projection<State> {
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, number>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'console.link_issued':
        put(this.links, e.data.linkDigest, isoMs(e.data.expiresAt), eventAtMs(e), MAX_CONSOLE_LINKS);
        break;
      case 'console.signed_in':
        this.links.delete(e.data.linkDigest);
        put(this.sessions, e.data.sessionDigest, isoMs(e.data.expiresAt), eventAtMs(e), MAX_CONSOLE_SESSIONS);
        break;
      case 'console.signed_out':
        this.sessions.delete(e.data.sessionDigest);
        break;
      default:
        break;
    }
  }

  /** The link's expiry (epoch ms) when it is unused and not expired at `now`, else null. */
  linkExpiry(digest: string, now: Date): number | null {
    return live(this.links, digest, now);
  }

  /** The console session's expiry (epoch ms) when it is signed in at `now`, else null. */
  sessionExpiry(digest: string, now: Date): number | null {
    return live(this.sessions, digest, now);
  }

  /** Browsers signed in at `now`. */
  signedIn(now: Date): number {
    let n = 0;
    for (const until of this.sessions.values()) if (until > now.getTime()) n++;
    return n;
  }

  snapshot(): State {
    return { links: [...this.links], sessions: [...this.sessions] };
  }

  restore(state: State): void {
    this.links.clear();
    this.sessions.clear();
    for (const [d, until] of state.links) this.links.set(d, until);
    for (const [d, until] of state.sessions) this.sessions.set(d, until);
  }
}

function live(map: Map<string, number>, digest: string, now: Date): number | null {
  const until = map.get(digest);
  return until !== undefined && until > now.getTime() ? until : null;
}

/** Adds an entry after dropping those expired at `at`, then the oldest beyond `cap` (Map order is insertion order). */
function put(map: Map<string, number>, digest: string, until: number, at: number, cap: number): void {
  for (const [d, u] of map) if (u <= at) map.delete(d);
  map.set(digest, until);
  for (const d of map.keys()) {
    if (map.size <= cap) break;
    map.delete(d);
  }
}
