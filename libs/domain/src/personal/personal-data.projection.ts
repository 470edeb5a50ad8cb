import { eventAtMs } from '../event-time';
import type { ForgetScope, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

/** One forgetting as the console lists it (the keys counted, never content). */
export type Forgetting = {
  seq: number;
  at: number;
  scope: ForgetScope;
  device: string | null;
  before: string | null;
  keys: number;
  by: string;
};

/** How many forgettings the read model keeps (the log keeps them all). */
export const FORGETTINGS_KEPT = 50;

type State = { recent: Forgetting[]; pending: string[] };

/**
 * Forgetting of personal content: the latest forgettings for the console, and the keys of the last
 * ones, so a relay that stopped between recording a forgetting and destroying its keys destroys them at
 * the next start.
 */
export class PersonalDataProjection implements Projection<State> {
  private recentList: Forgetting[] = [];
  private pendingKeys: string[] = [];

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    if (e.type !== 'personal.forgotten') return;
    const d = e.data;
    this.recentList.unshift({ seq: e.seq, at: eventAtMs(e), scope: d.scope, device: d.device, before: d.before, keys: d.keys.length, by: e.actor });
    if (this.recentList.length > FORGETTINGS_KEPT) this.recentList.length = FORGETTINGS_KEPT;
    this.pendingKeys = [...d.keys];
  }

  recent(): Forgetting[] {
    return this.recentList;
  }

  /** The keys the newest forgetting destroyed (destroying them again is a no-op). */
  lastKeys(): readonly string[] {
    return this.pendingKeys;
  }

  snapshot(): State {
    return { recent: this.recentList.map((f) => ({ ...f })), pending: [...this.pendingKeys] };
  }

  restore(state: State): void {
    this.recentList = state.recent.map((f) => ({ ...f }));
    this.pendingKeys = [...state.pending];
  }
}
