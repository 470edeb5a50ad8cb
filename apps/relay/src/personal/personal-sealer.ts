import { secretKeyOwner, type ReadModels } from '@svc/domain';
import {
  HOST_KEY_OWNER,
  isPersonalType,
  openedPersonal,
  personalKeySlot,
  sealedOf,
  sealPersonal,
  unsealPersonal,
  type NewEvent,
  type StoredEvent,
} from '@svc/events';
import type { PersonalKeyStore } from './key-store';

export type Sealed = {
  /** What the store appends (personal fields sealed). */
  records: NewEvent[];
  /** Per event, the open form's data to put back after stamping (null: not personal). */
  opened: Array<Record<string, unknown> | null>;
  /** Resolves once every new key these events need is stored. */
  persisted: Promise<void> | null;
};

/** RELAY_PERSONAL_DATA_KEYS_PER_HOUR's default. */
export const KEYS_PER_HOUR = 12;

/**
 * Seals personal content on its way into the log and opens it on its way out of it, under the data key of
 * the device it belongs to for the hour it happened in: a phone's notifications and replies under that
 * phone's key, a Thread message under the subscribed phone's key (the host's when none is subscribed).
 */
export class PersonalSealer {
  constructor(
    readonly keys: PersonalKeyStore,
    private readonly keysPerHour = KEYS_PER_HOUR,
  ) {}

  seal(events: readonly NewEvent[], models: ReadModels, now: Date): Sealed | null {
    if (!events.some((e) => isPersonalType(e.type))) return null;
    const pending: Promise<void>[] = [];
    const opened: Sealed['opened'] = [];
    const records = events.map((e) => {
      if (!isPersonalType(e.type)) {
        opened.push(null);
        return e;
      }
      // A secret's value goes under a fresh key of its own: replacing or forgetting it destroys that key alone.
      const secret = e.type === 'secret.set' ? (e.data as { name: string }).name : null;
      const slot = personalKeySlot(secret !== null ? secretKeyOwner(secret) : this.owner(e, models), now);
      const { id, key, persisted } = secret !== null ? this.keys.current(slot, true) : this.keyOf(slot, models);
      if (persisted) pending.push(persisted);
      opened.push(openedPersonal(e.data, id));
      return { ...e, data: sealPersonal(e.type, e.data, id, key) };
    });
    return { records, opened, persisted: pending.length ? Promise.all(pending).then(() => undefined) : null };
  }

  /** The data keys these records (as stored: sealed) are sealed with. */
  keyIds(records: readonly StoredEvent[]): string[] {
    const ids: string[] = [];
    for (const e of records) {
      const sealed = isPersonalType(e.type) ? sealedOf(e.data) : null;
      if (sealed) ids.push(sealed.key);
    }
    return ids;
  }

  unseal<E extends StoredEvent>(e: E): E {
    return unsealPersonal(e, (id) => this.keys.get(id));
  }

  /**
   * The slot's key, unless another device received content under it: that device's forgetting destroys
   * it, so new content goes under a fresh key (at most `keysPerHour` in a slot; past them the last is used).
   */
  private keyOf(slot: string, models: ReadModels): ReturnType<PersonalKeyStore['current']> {
    const k = this.keys.current(slot);
    if (models.personalData.receivers(k.id).length === 0 || this.keys.count(slot) >= this.keysPerHour) return k;
    return this.keys.current(slot, true);
  }

  private owner(e: NewEvent, models: ReadModels): string {
    const prefix = (e.data as { tokenPrefix?: unknown }).tokenPrefix;
    if (typeof prefix === 'string' && prefix.length > 0) return prefix;
    return models.phoneThreads.subscriber()?.tokenPrefix ?? HOST_KEY_OWNER;
  }
}
