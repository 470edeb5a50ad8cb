import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { ForgetScope, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableForgetting = {
  seq: number;
  at: number;
  scope: ForgetScope;
  device: string | null;
  before: string | null;
  keys: number;
  by: string;
};

/** One forgetting as the console lists it (the keys counted, never content); read-only outside this projection. */
export type Forgetting = DeepReadonly<MutableForgetting>;

/** How many forgettings the read model keeps (the log keeps them all). */
export const FORGETTINGS_KEPT = 50;

type State = {
  recent: MutableForgetting[];
  pending: string[];
  /** Queued Thread messages sealed under a key: [messageId, key]. */
  queuedUnder?: Array<[string, string]>;
  /** Keys another device received content under: [key, token prefixes]. */
  received?: Array<[string, string[]]>;
};

/**
 * Forgetting of personal content: the latest forgettings for the console, and the keys of the last
 * ones, so a relay that stopped between recording a forgetting and destroying its keys destroys them at
 * the next start. Also which keys a device received content under that are not its own: a Thread message
 * sealed under the host's key (queued while no phone was subscribed) or under another phone's, then
 * delivered to it. A forgetting of that device destroys those keys too (issue 34, finding 8).
 */
export class PersonalDataProjection implements Projection<State> {
  private recentList: MutableForgetting[] = [];
  private pendingKeys: string[] = [];
  private readonly queuedUnder = new Map<string, string>();
  private readonly receivedBy = new Map<string, string[]>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'phone.message_posted':
        if (e.data.sealedWith) this.queuedUnder.set(e.data.messageId, e.data.sealedWith);
        break;
      case 'phone.message_delivered': {
        const key = this.queuedUnder.get(e.data.messageId);
        this.queuedUnder.delete(e.data.messageId);
        // A key is named `<device>:<hour>:<random>`: one of the recipient's own needs no note.
        if (key && !key.startsWith(`${e.data.tokenPrefix}:`)) {
          const devices = this.receivedBy.get(key) ?? [];
          if (!devices.includes(e.data.tokenPrefix)) this.receivedBy.set(key, [...devices, e.data.tokenPrefix]);
        }
        break;
      }
      case 'phone.message_dropped':
      case 'phone.message_expired':
      case 'phone.message_cancelled':
        this.queuedUnder.delete(e.data.messageId);
        break;
      case 'personal.forgotten': {
        const d = e.data;
        this.recentList.unshift({
          seq: e.seq,
          at: eventAtMs(e),
          scope: d.scope,
          device: d.device,
          before: d.before,
          keys: d.keys.length,
          by: e.actor,
        });
        if (this.recentList.length > FORGETTINGS_KEPT) this.recentList.length = FORGETTINGS_KEPT;
        this.pendingKeys = [...d.keys];
        const gone = new Set(d.keys);
        for (const key of gone) this.receivedBy.delete(key);
        for (const [id, key] of this.queuedUnder) if (gone.has(key)) this.queuedUnder.delete(id);
        break;
      }
      default:
        break;
    }
  }

  recent(): readonly Forgetting[] {
    return this.recentList;
  }

  /** The keys the newest forgetting destroyed (destroying them again is a no-op). */
  lastKeys(): readonly string[] {
    return this.pendingKeys;
  }

  /** The devices (token prefixes) that received content under `key`, a key not their own. */
  receivers(key: string): readonly string[] {
    return this.receivedBy.get(key) ?? [];
  }

  snapshot(): State {
    return {
      recent: this.recentList.map((f) => ({ ...f })),
      pending: [...this.pendingKeys],
      queuedUnder: [...this.queuedUnder],
      received: [...this.receivedBy].map(([k, devices]) => [k, [...devices]]),
    };
  }

  restore(state: State): void {
    this.recentList = state.recent.map((f) => ({ ...f }));
    this.pendingKeys = [...state.pending];
    this.queuedUnder.clear();
    this.receivedBy.clear();
    for (const [id, key] of state.queuedUnder ?? []) this.queuedUnder.set(id, key);
    for (const [key, devices] of state.received ?? []) this.receivedBy.set(key, [...devices]);
  }
}
