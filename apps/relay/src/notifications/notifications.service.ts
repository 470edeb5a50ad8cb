import { Injectable } from '@nestjs/common';
import { epoch, actorOf, NOTIFICATIONS_KEPT, postNotification, removeNotification, type NotificationEntry } from '@svc/domain';
import { randomUUID } from 'node:crypto';
import { CommandLoop } from '../common/loop/command-loop';
import { readFrame } from '../common/sockets/parse-frame';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { NotificationPostedFrame, NotificationRemovedFrame } from './notifications-frames.dto';

/** The notification companion: phones push entries on `notifications`; the list keeps the latest 100. */
@Injectable()
export class NotificationsService {
  constructor(
    private readonly loop: CommandLoop,
    router: ChannelRouter,
  ) {
    router.register('notifications', { onFrame: (conn, env) => this.onFrame(conn, env) });
  }

  private async onFrame(conn: PhoneConnection, env: Envelope): Promise<void> {
    const p = conn.principal!;
    switch (env.type) {
      case 'notification.posted': {
        const entry = readFrame(NotificationPostedFrame, env.payload).entry();
        const entryId = randomUUID();
        await this.loop.run(actorOf(p), (m) => postNotification(m, { entryId, tokenPrefix: p.tokenPrefix, deviceName: p.deviceName, entry }));
        // Acknowledged only when the phone asked (sent an id): older phones expect no answer.
        if (env.id) conn.send('notifications', 'notification.ok', { id: entryId }, env.id);
        return;
      }
      case 'notification.removed': {
        const { key } = readFrame(NotificationRemovedFrame, env.payload);
        await this.loop.run(actorOf(p), (m) => removeNotification(m, p.tokenPrefix, key));
        return;
      }
      default:
        // WIRE.md: unknown notification types are ignored (newer phones may send more).
        return;
    }
  }

  recent(limit?: number) {
    const entries = this.loop.models.notifications.recent(limit ?? NOTIFICATIONS_KEPT);
    return { ok: true as const, count: entries.length, cap: NOTIFICATIONS_KEPT, notifications: entries.map(view) };
  }
}

function view(x: NotificationEntry) {
  return {
    id: x.entryId,
    package_name: x.packageName,
    title: x.title,
    text: x.text,
    sub_text: x.subText ?? null,
    // Epoch ms, as the app sent it and as the host's android_notifications_recent tool tells the model it is.
    posted_at: x.postedAt,
    received_at: epoch(x.receivedAt),
    key: x.key,
    device_name: x.deviceName,
    token_prefix: x.tokenPrefix,
  };
}
