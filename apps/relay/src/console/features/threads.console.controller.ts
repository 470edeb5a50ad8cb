import { Controller, Get } from '@nestjs/common';
import type { ThreadsView } from '@svc/console-api';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import { CommandLoop } from '../../common/command-loop';
import { ConsoleFeatures } from '../console-features';
import { epoch } from '@svc/domain';

/** Threads page: the phone subscriber, messages queued for it, threads, and recent phone notifications. */
@Controller('/console/api/threads')
export class ThreadsConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly log: CommandLoop,
    private readonly clock: Clock,
  ) {
    features.add({ id: 'threads', title: 'Threads', order: 40 });
  }

  @Get()
  @Auth('loopback')
  view(): ThreadsView {
    const m = this.log.models;
    const sub = m.phoneThreads.subscriber();
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      subscriber: sub ? { token_prefix: sub.tokenPrefix, device_name: sub.deviceName, since: epoch(sub.since) } : null,
      queued: m.phoneThreads.queued().map((q) => ({
        message_id: q.messageId,
        chat_id: q.chatId,
        title: q.title,
        text: q.text.length > 200 ? `${q.text.slice(0, 199)}…` : q.text,
        posted_at: epoch(q.postedAt),
        expires_at: epoch(q.expiresAt),
      })),
      threads: m.phoneThreads
        .threadList()
        .slice(0, 50)
        .map((t) => ({ chat_id: t.chatId, title: t.title, messages: t.messages, replies: t.replies, last_activity: epoch(t.lastActivity) })),
      notifications: m.notifications.recent(50).map((n) => ({
        entry_id: n.entryId,
        token_prefix: n.tokenPrefix,
        device_name: n.deviceName,
        package_name: n.packageName,
        title: n.title,
        text: n.text,
        received_at: epoch(n.receivedAt),
      })),
    };
  }
}
