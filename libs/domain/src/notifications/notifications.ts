import type { NewEvent, NotificationEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';

export const NOTIFICATION_LIMITS = { packageName: 256, title: 512, text: 4000, key: 256 } as const;

/*
 * The rules of a phone's notification frames, each a function of one field's value that throws
 * `notifications.bad_field {field}` (the relay's frame DTOs state them with DomainRule); the commands
 * below take what passed.
 */

const badField = (field: string, message: string) => new DomainError('notifications.bad_field', 'invalid', message, { field });

/** A text field (`title`, `text`, `sub_text`, `key` of an entry): absent, null or a string. */
export function notificationText(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badField(field, `${field} must be a string`);
  return value;
}

/** `package_name`: a string with more than blanks in its first 256 characters. */
export function notificationPackage(value: unknown): string {
  const v = notificationText('package_name', value);
  if (v === null || v.slice(0, NOTIFICATION_LIMITS.packageName).trim().length === 0)
    throw badField('package_name', 'package_name is required (a string)');
  return v;
}

/** `posted_at`: epoch seconds (WIRE.md); epoch milliseconds are recognised by their size and accepted too. */
export function notificationPostedAt(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw badField('posted_at', 'posted_at must be epoch seconds');
  if (epochMs(value) > 8.64e15) throw badField('posted_at', 'posted_at is out of range');
  return value;
}

/** `key` of `notification.removed`: the entry the phone dismissed. */
export function notificationKey(value: unknown): string {
  const v = notificationText('key', value);
  if (!v?.slice(0, NOTIFICATION_LIMITS.key)) throw badField('key', 'key is required (a string)');
  return v;
}

const epochMs = (n: number): number => (n > 1e11 ? n : n * 1000);

/** `notification.posted {package_name, title, text, sub_text?, posted_at, key?}`, each field passed by its rule above. */
export type PostedNotification = {
  packageName: string;
  title: string | null;
  text: string | null;
  subText: string | null;
  postedAt: number | null;
  key: string | null;
};

export type PostNotification = { entryId: string; tokenPrefix: string; deviceName: string; entry: PostedNotification };

/** A phone's entry, its texts cut to their limits. */
export function postNotification(_m: ReadModels, cmd: PostNotification): NewEvent<NotificationEvent>[] {
  const e = cmd.entry;
  const cut = (v: string | null, max: number) => (v === null ? null : v.slice(0, max));
  return [
    {
      type: 'notification.posted',
      data: {
        entryId: cmd.entryId,
        tokenPrefix: cmd.tokenPrefix,
        deviceName: cmd.deviceName,
        packageName: e.packageName.slice(0, NOTIFICATION_LIMITS.packageName),
        title: cut(e.title, NOTIFICATION_LIMITS.title),
        text: cut(e.text, NOTIFICATION_LIMITS.text),
        // NotificationModels.kt: the app's entry carries `sub_text` (null when the notification has none).
        subText: cut(e.subText, NOTIFICATION_LIMITS.title),
        postedAt: e.postedAt === null ? null : new Date(Math.round(epochMs(e.postedAt))).toISOString(),
        key: cut(e.key, NOTIFICATION_LIMITS.key),
      },
    },
  ];
}

/** `notification.removed {key}`: the phone dismissed it. Unknown keys change nothing. */
export function removeNotification(m: ReadModels, tokenPrefix: string, key: string): NewEvent<NotificationEvent>[] {
  const k = key.slice(0, NOTIFICATION_LIMITS.key);
  if (!m.notifications.recent().some((x) => x.key === k && x.tokenPrefix === tokenPrefix)) return [];
  return [{ type: 'notification.removed', data: { tokenPrefix, key: k } }];
}
