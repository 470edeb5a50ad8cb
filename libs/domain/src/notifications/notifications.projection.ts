import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { NotificationPosted, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { forgottenPersonal } from '@svc/events/personal-fields';

type MutableNotificationEntry = Omit<NotificationPosted['data'], 'postedAt'> & { postedAt: number | null; receivedAt: number };

/** A `notification.posted` entry, its times as epoch ms; read-only outside this projection. */
export type NotificationEntry = DeepReadonly<MutableNotificationEntry>;

/** Spec 2.5 / 8: the companion list keeps the latest 100 entries. */
export const NOTIFICATIONS_KEPT = 100;

/** Recent phone notifications, newest first. Ephemeral: `relay.started` clears it (spec 2.5). */
export class NotificationsProjection implements Projection<{ entries: MutableNotificationEntry[] }> {
  private entries: MutableNotificationEntry[] = [];

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.entries = [];
        break;
      case 'notification.posted': {
        const d = e.data;
        if (this.entries.some((x) => x.entryId === d.entryId)) break;
        // The same key from the same phone is an update: it replaces the older entry.
        if (d.key !== null) this.entries = this.entries.filter((x) => !(x.key === d.key && x.tokenPrefix === d.tokenPrefix));
        this.entries.unshift({ ...d, postedAt: d.postedAt === null ? null : isoMs(d.postedAt), receivedAt: eventAtMs(e) });
        if (this.entries.length > NOTIFICATIONS_KEPT) this.entries.length = NOTIFICATIONS_KEPT;
        break;
      }
      case 'personal.forgotten': {
        const keys = new Set(e.data.keys);
        this.entries = this.entries.map((x) =>
          x.sealedWith && keys.has(x.sealedWith) ? (forgottenPersonal('notification.posted', x) as unknown as MutableNotificationEntry) : x,
        );
        break;
      }
      case 'notification.removed':
        this.entries = this.entries.filter((x) => !(x.key === e.data.key && x.tokenPrefix === e.data.tokenPrefix));
        break;
      default:
        break;
    }
  }

  recent(limit = NOTIFICATIONS_KEPT): readonly NotificationEntry[] {
    return this.entries.slice(0, limit);
  }

  count(): number {
    return this.entries.length;
  }

  snapshot(): { entries: MutableNotificationEntry[] } {
    return { entries: this.entries.map((x) => ({ ...x })) };
  }

  restore(state: { entries: MutableNotificationEntry[] }): void {
    this.entries = [...state.entries];
  }
}
