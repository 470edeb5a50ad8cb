import { Inject, Injectable } from '@nestjs/common';
import { epoch, messageOf, messageView, PHONE_CHANNEL_ID, threadOf, type PhoneReply } from '@svc/domain';
import { AgentSessionStore } from '../agent-store/agent-session-store';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { threadRows } from './thread-sessions';

/** What Threads answers about its state: the channel, the queue, one message, the thread list, one thread. Reads only. */
@Injectable()
export class ThreadViews {
  constructor(
    private readonly loop: CommandLoop,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    private readonly agentStore: AgentSessionStore,
  ) {}

  channelInfo() {
    const sub = this.loop.models.phoneThreads.subscriber();
    return {
      channel_id: PHONE_CHANNEL_ID,
      home_channel_name: this.config.phoneHomeChannelName,
      enabled: this.config.phoneEnabled,
      subscribed: sub !== null,
      subscriber: sub ? { token_prefix: sub.tokenPrefix, device_name: sub.deviceName, since: epoch(sub.since) } : null,
    };
  }

  outbound(chatId?: string) {
    const queued = this.loop.models.phoneThreads.queued().filter((m) => chatId === undefined || m.chatId === chatId);
    // `queued` and each message's `sent_at` (epoch ms) are what the desktop CLI's `relay queue` prints.
    return {
      ok: true as const,
      ...this.channelInfo(),
      max: this.config.phoneQueueMax,
      count: queued.length,
      queued: queued.length,
      messages: queued.map((m) => ({ ...messageView(m), sent_at: m.postedAt })),
    };
  }

  message(messageId: string) {
    const msg = messageOf(this.loop.models, messageId);
    return { ok: true as const, ...messageView(msg), delivered_to: msg.deliveredTo, queued_delivery: msg.queuedDelivery };
  }

  threads() {
    const phone = this.loop.models.phoneThreads;
    const store = this.agentStore.phoneSessions();
    const relay = phone.threadList().map((t) => {
      const lastEntry = t.entries[t.entries.length - 1];
      return {
        sessionId: t.sessionId ?? null,
        chat_id: t.chatId,
        title: t.title,
        messages: t.messages,
        replies: t.replies,
        queued: phone.queued().filter((m) => m.chatId === t.chatId).length,
        last_activity: epoch(t.lastActivity),
        last: lastEntry ? this.entryView(lastEntry) : null,
      };
    });
    return {
      ok: true as const,
      channel_id: PHONE_CHANNEL_ID,
      home_channel_name: this.config.phoneHomeChannelName,
      // The app maps a session to its Thread by `session_id` (RelayHttpClient.PhoneThreadInfo) and skips blank ones.
      threads: threadRows(relay, store.sessions),
      session_store: store.status,
    };
  }

  thread(chatId: string) {
    const t = threadOf(this.loop.models, chatId);
    return {
      ok: true as const,
      chat_id: t.chatId,
      title: t.title,
      messages: t.messages,
      replies: t.replies,
      last_activity: epoch(t.lastActivity),
      entries: t.entries.map((e) => this.entryView(e)).filter((e) => e !== null),
    };
  }

  private entryView(e: { kind: 'message' | 'reply'; id: string }) {
    if (e.kind === 'message') {
      const m = this.loop.models.phoneThreads.message(e.id);
      return m ? { kind: 'message' as const, ...messageView(m), ts: epoch(m.postedAt) } : null;
    }
    const r = this.loop.models.phoneThreads.reply(e.id);
    return r ? { kind: 'reply' as const, ...replyView(r) } : null;
  }
}

export function replyView(r: PhoneReply) {
  return {
    reply_id: r.replyId,
    chat_id: r.chatId,
    text: r.text,
    reply_to: r.replyTo,
    // The host platform (PhoneAdapter._normalize_reply) reads `message_id` and `metadata`.
    message_id: r.clientMsgId ?? r.replyId,
    metadata: {},
    token_prefix: r.tokenPrefix,
    device_name: r.deviceName,
    via: r.via,
    ts: epoch(r.at),
    cursor: r.seq,
  };
}
