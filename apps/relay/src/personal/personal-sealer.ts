import type { ReadModels } from '@svc/domain';
import {
  HOST_KEY_OWNER,
  isPersonalType,
  openedPersonal,
  personalKeySlot,
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

/**
 * Seals personal content on its way into the log and opens it on its way out of it, under the data key of
 * the device it belongs to for the hour it happened in: a phone's notifications and replies under that
 * phone's key, a Thread message under the subscribed phone's key (the host's when none is subscribed).
 */
export class PersonalSealer {
  constructor(readonly keys: PersonalKeyStore) {}

  seal(events: readonly NewEvent[], models: ReadModels, now: Date): Sealed | null {
    if (!events.some((e) => isPersonalType(e.type))) return null;
    const pending: Promise<void>[] = [];
    const opened: Sealed['opened'] = [];
    const records = events.map((e) => {
      if (!isPersonalType(e.type)) {
        opened.push(null);
        return e;
      }
      const { id, key, persisted } = this.keys.current(personalKeySlot(this.owner(e, models), now));
      if (persisted) pending.push(persisted);
      opened.push(openedPersonal(e.data, id));
      return { ...e, data: sealPersonal(e.type, e.data, id, key) };
    });
    return { records, opened, persisted: pending.length ? Promise.all(pending).then(() => undefined) : null };
  }

  unseal<E extends StoredEvent>(e: E): E {
    return unsealPersonal(e, (id) => this.keys.get(id));
  }

  private owner(e: NewEvent, models: ReadModels): string {
    const prefix = (e.data as { tokenPrefix?: unknown }).tokenPrefix;
    if (typeof prefix === 'string' && prefix.length > 0) return prefix;
    return models.phoneThreads.subscriber()?.tokenPrefix ?? HOST_KEY_OWNER;
  }
}
