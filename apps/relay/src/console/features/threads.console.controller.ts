import { Controller, Get, Inject, Param } from '@nestjs/common';
import type { ThreadDetail, ThreadEntryRow, ThreadsView } from '@svc/console-api';
import { epoch, threadOf, type ReadModels } from '@svc/domain';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import type { RelayConfig } from '../../common/config/relay-config';
import { CommandLoop } from '../../common/loop/command-loop';
import { RELAY_CONFIG } from '../../common/auth/tokens';
import { ChatIdParam } from '../../threads/threads.dto';
import { ConsoleFeatures } from '../console-features';

/**
 * Threads page: whether Threads is on (PHONE_ENABLED), the phone subscriber, messages queued for it,
 * threads (each opens to its messages and replies), and recent phone notifications.
 */
@Controller('/console/api/threads')
export class ThreadsConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {
    features.add({ id: 'threads', title: 'Threads', order: 40 });
  }

  @Get()
  @Auth('operator')
  view(): ThreadsView {
    const m = this.loop.models;
    const sub = m.phoneThreads.subscriber();
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      enabled: this.config.phoneEnabled,
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
        ...(n.forgotten ? { forgotten: true } : {}),
      })),
    };
  }

  /** One thread, oldest first: the messages and replies the relay keeps (the newest 100 entries). */
  @Get('/:chat_id')
  @Auth('operator')
  thread(@Param() p: ChatIdParam): ThreadDetail {
    return { ok: true, server_time: epoch(this.clock.now()), ...threadDetail(this.loop.models, p.chat_id) };
  }
}

export function threadDetail(m: ReadModels, chatId: string): Omit<ThreadDetail, 'ok' | 'server_time'> {
  const t = threadOf(m, chatId);
  const entries: ThreadEntryRow[] = [];
  for (const e of t.entries) {
    if (e.kind === 'message') {
      const msg = m.phoneThreads.message(e.id);
      if (msg)
        entries.push({
          kind: 'message',
          id: msg.messageId,
          title: msg.title,
          text: msg.text,
          at: epoch(msg.postedAt),
          state: msg.state,
          delivered_to: msg.deliveredTo,
          ...(msg.forgotten ? { forgotten: true } : {}),
        });
    } else {
      const r = m.phoneThreads.reply(e.id);
      if (r)
        entries.push({
          kind: 'reply',
          id: r.replyId,
          text: r.text,
          at: epoch(r.at),
          device_name: r.deviceName,
          token_prefix: r.tokenPrefix,
          reply_to: r.replyTo,
          ...(r.forgotten ? { forgotten: true } : {}),
        });
    }
  }
  return {
    chat_id: t.chatId,
    title: t.title,
    messages: t.messages,
    replies: t.replies,
    entries,
    older: Math.max(0, t.messages + t.replies - entries.length),
  };
}
