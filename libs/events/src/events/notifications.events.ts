import type { Ev } from '../event';

/** The notification companion (spec 2.5): what a phone pushed on the `notifications` channel. */

/** One entry a phone pushed on the `notifications` channel. Ephemeral: the list resets at `relay.started`. */
export type NotificationPosted = Ev<
  'notification.posted',
  {
    entryId: string;
    tokenPrefix: string;
    deviceName: string;
    packageName: string;
    title: string | null;
    text: string | null;
    /** The notification's sub-text (the app sends `sub_text`). Absent in older logs. */
    subText?: string | null;
    /** The phone's own time for the notification (ISO), when it sent one. */
    postedAt: string | null;
    key: string | null;
    /** The data key its title and texts are sealed under in the record (see personal-data.ts). */
    sealedWith?: string;
    /** Its key was destroyed: title and texts are null. */
    forgotten?: boolean;
  }
>;
export type NotificationRemoved = Ev<'notification.removed', { tokenPrefix: string; key: string }>;
export type NotificationEvent = NotificationPosted | NotificationRemoved;
