import type { Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { eventAtMs } from '../event-time';
import { SECRET_KEY_OWNER_PREFIX } from './secrets';

type Entry = {
  name: string;
  created: number;
  updated: number;
  lastUsed: number | null;
  /** The data key the current value went under. */
  key: string | null;
  /** null: its key is gone (a replay after forgetting shows the record in its forgotten form). */
  value: string | null;
};

/** What the operator sees of a secret: never its value. */
export type SecretInfo = { name: string; created: number; updated: number; lastUsed: number | null };

type State = { secrets: Entry[] };

/**
 * The registered secrets. The value is held here in memory as notification text is (the snapshots that
 * hold the read models are encrypted, and renewed after a forgetting); it leaves only to be typed.
 */
export class SecretsProjection implements Projection<State> {
  private readonly byName = new Map<string, Entry>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'secret.set': {
        const at = eventAtMs(e);
        const had = this.byName.get(e.data.name);
        this.byName.set(e.data.name, {
          name: e.data.name,
          created: had?.created ?? at,
          updated: at,
          lastUsed: had?.lastUsed ?? null,
          key: e.data.sealedWith ?? null,
          value: e.data.forgotten ? null : e.data.value,
        });
        break;
      }
      case 'personal.forgotten': {
        const d = e.data;
        if (d.scope !== 'secret' || !d.device?.startsWith(SECRET_KEY_OWNER_PREFIX)) break;
        const name = d.device.slice(SECRET_KEY_OWNER_PREFIX.length);
        const s = this.byName.get(name);
        // A replacement forgets the keys of the value it replaced: the new one (under a fresh key) stays.
        if (s && (s.key === null || d.keys.includes(s.key))) this.byName.delete(name);
        break;
      }
      case 'bridge.command_sent': {
        const s = e.data.secret ? this.byName.get(e.data.secret) : undefined;
        if (s) s.lastUsed = eventAtMs(e);
        break;
      }
      default:
        break;
    }
  }

  get(name: string): Readonly<Entry> | undefined {
    return this.byName.get(name);
  }

  count(): number {
    return this.byName.size;
  }

  /** By name, without values. */
  list(): SecretInfo[] {
    return [...this.byName.values()]
      .map(({ name, created, updated, lastUsed }) => ({ name, created, updated, lastUsed }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  snapshot(): State {
    return { secrets: [...this.byName.values()].map((s) => ({ ...s })) };
  }

  restore(state: State): void {
    this.byName.clear();
    for (const s of state.secrets ?? []) this.byName.set(s.name, { ...s });
  }
}
