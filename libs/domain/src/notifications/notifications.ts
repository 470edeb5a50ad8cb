import type { NewEvent, NotificationEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';

export const NOTIFICATION_LIMITS = { packageName: 256, title: 512, text: 4000, key: 256 } as const;

export type PostNotification = { entryId: string; tokenPrefix: string; deviceName: string; payload: Record<string, unknown> };

const optText = (p: Record<string, unknown>, field: string, max: number): string | null => {
  const v = p[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new DomainError('notifications.bad_field', 'invalid', `${field} must be a string`, { field });
  return v.slice(0, max);
};

/** `notification.posted {package_name, title, text, sub_text?, posted_at, key?}` from a phone; unknown fields ignored. */
export function postNotification(_m: ReadModels, cmd: PostNotification): NewEvent<NotificationEvent>[] {
  const p = cmd.payload;
  const packageName = optText(p, 'package_name', NOTIFICATION_LIMITS.packageName);
  if (!packageName || packageName.trim().length === 0) {
    throw new DomainError('notifications.bad_field', 'invalid', 'package_name is required (a string)', { field: 'package_name' });
  }
  let postedAt: string | null = null;
  if (p.posted_at !== undefined && p.posted_at !== null) {
    // Epoch seconds (WIRE.md); epoch milliseconds are recognised by their size and accepted too.
    const n = p.posted_at;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
      throw new DomainError('notifications.bad_field', 'invalid', 'posted_at must be epoch seconds', { field: 'posted_at' });
    }
    const ms = n > 1e11 ? n : n * 1000;
    if (ms > 8.64e15) throw new DomainError('notifications.bad_field', 'invalid', 'posted_at is out of range', { field: 'posted_at' });
    postedAt = new Date(Math.round(ms)).toISOString();
  }
  return [
    {
      type: 'notification.posted',
      data: {
        entryId: cmd.entryId,
        tokenPrefix: cmd.tokenPrefix,
        deviceName: cmd.deviceName,
        packageName,
        title: optText(p, 'title', NOTIFICATION_LIMITS.title),
        text: optText(p, 'text', NOTIFICATION_LIMITS.text),
        // NotificationModels.kt: the app's entry carries `sub_text` (null when the notification has none).
        subText: optText(p, 'sub_text', NOTIFICATION_LIMITS.title),
        postedAt,
        key: optText(p, 'key', NOTIFICATION_LIMITS.key),
      },
    },
  ];
}

/** `notification.removed {key}`: the phone dismissed it. Unknown keys change nothing. */
export function removeNotification(m: ReadModels, tokenPrefix: string, payload: Record<string, unknown>): NewEvent<NotificationEvent>[] {
  const key = optText(payload, 'key', NOTIFICATION_LIMITS.key);
  if (!key) throw new DomainError('notifications.bad_field', 'invalid', 'key is required (a string)', { field: 'key' });
  if (!m.notifications.recent().some((x) => x.key === key && x.tokenPrefix === tokenPrefix)) return [];
  return [{ type: 'notification.removed', data: { tokenPrefix, key } }];
}
