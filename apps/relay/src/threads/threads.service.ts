import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  epoch,
  actorOf,
  cancelByIdOrPrefix,
  cancelIfQueued,
  cancelMessage,
  cancelQueued,
  DomainError,
  PHONE_CHANNEL_ID,
  postMessage,
  recordReply,
  takeReplies,
  type PhoneReply,
  type Principal,
} from '@svc/domain';
import type { Surfacing } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { ThreadDelivery } from './thread-delivery';
import { replyView } from './thread-views';
import { CHAT_ID } from './threads.dto';

/** The longest a reply poll is held (the reference relay's cap; the host platform asks for 25 s). */
export const REPLIES_MAX_WAIT = 30;

export type PostInput = {
  chatId?: string;
  text: string;
  title?: string | null;
  surfacing?: Surfacing | null;
  replyTo?: string | null;
  metadata?: Record<string, unknown> | null;
  messageId?: string;
  sessionId?: string | null;
};

export type ReplyInput = { chatId?: string; text: string; replyTo?: string | null; clientMsgId?: string | null };

/**
 * Phone Threads' commands: the agent's messages to the phone (queued, then delivered by ThreadDelivery),
 * cancelling them, the phone's replies, and the host's poll for those replies.
 */
@Injectable()
export class PhoneThreadsService implements OnModuleDestroy {
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly loop: CommandLoop,
    private readonly delivery: ThreadDelivery,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  /** PHONE_ENABLED: whether the agent may message the phone at all (a Thread hand-over needs it). */
  get enabled(): boolean {
    return this.config.phoneEnabled;
  }

  /** Long-polls of `GET /phone/replies` held open right now, waiting for a reply. */
  get heldPolls(): number {
    return this.waiters.size;
  }

  /** Before the server closes: held long-polls answer now instead of holding shutdown for their wait. */
  onModuleDestroy(): void {
    for (const release of [...this.waiters]) release();
  }

  // ---- agent to phone -------------------------------------------------------------------------

  async post(input: PostInput, caller: Principal) {
    const messageId = input.messageId ?? randomUUID();
    const fromMetadata = input.metadata?.session_id;
    const sessionId = input.sessionId ?? (typeof fromMetadata === 'string' && CHAT_ID.test(fromMetadata) ? fromMetadata : null);
    const policy = { enabled: this.config.phoneEnabled, queueMax: this.config.phoneQueueMax };
    const stored = await this.loop.run(actorOf(caller), (m, now) =>
      postMessage(
        m,
        {
          messageId,
          chatId: input.chatId ?? PHONE_CHANNEL_ID,
          text: input.text,
          title: input.title ?? null,
          surfacing: input.surfacing ?? null,
          replyTo: input.replyTo ?? null,
          metadata: input.metadata ?? null,
          ...(sessionId ? { sessionId } : {}),
        },
        policy,
        now,
      ),
    );
    const duplicate = stored.length === 0;
    if (duplicate) {
      const known = this.loop.models.phoneThreads.message(messageId);
      if (known && (known.text !== input.text || known.chatId !== (input.chatId ?? PHONE_CHANNEL_ID))) {
        throw new DomainError('phone.message_id_reused', 'conflict', 'that message_id was already used for a different message', {
          state: known.state,
        });
      }
    }
    // A retry also pumps: a message an earlier attempt could not write goes out now (as backlog).
    await this.delivery.deliver(duplicate ? new Set() : new Set([messageId]));
    const msg = this.loop.models.phoneThreads.message(messageId);
    if (!msg) throw new DomainError('phone.message_not_found', 'not_found', 'that message_id is no longer known');
    return {
      ok: true as const,
      delivered: msg.state === 'delivered',
      queued: msg.state === 'queued',
      ...(msg.state === 'queued' ? { expires_at: epoch(msg.expiresAt) } : {}),
      message_id: msg.messageId,
      chat_id: msg.chatId,
      state: msg.state,
      channel_id: PHONE_CHANNEL_ID,
      home_channel_name: this.config.phoneHomeChannelName,
      ...(duplicate ? { duplicate: true } : {}),
      ...(stored.some((e) => e.type === 'phone.message_dropped') ? { dropped: stored.filter((e) => e.type === 'phone.message_dropped').length } : {}),
    };
  }

  /** `DELETE /phone/outbound/{id}`: 404 when unknown, 409 when no longer queued. */
  async cancel(messageId: string, caller: Principal) {
    await this.loop.run(actorOf(caller), (m) => cancelMessage(m, messageId, actorOf(caller)));
    return { ok: true as const, cancelled: 1, message_ids: [messageId] };
  }

  /**
   * `DELETE /phone/outbound?message_id=` (the desktop CLI's cancel-one): 200 with `cancelled: 0` when it is
   * not queued; an id prefix names a queued message (`cancelByIdOrPrefix`).
   */
  async cancelOne(messageId: string, caller: Principal) {
    const stored = await this.loop.run(actorOf(caller), (m) => cancelByIdOrPrefix(m, messageId, actorOf(caller)));
    const ids = stored.map((e) => (e.data as { messageId: string }).messageId);
    const state = ids.length === 0 ? (this.loop.models.phoneThreads.message(messageId)?.state ?? null) : undefined;
    return { ok: true as const, cancelled: ids.length, message_ids: ids, ...(state !== undefined ? { state } : {}) };
  }

  /** `proactive.cancel`: how many were cancelled (0: that message is no longer queued). */
  async cancelIfQueued(messageId: string, caller: Principal): Promise<number> {
    const stored = await this.loop.run(actorOf(caller), (m) => cancelIfQueued(m, messageId, actorOf(caller)));
    return stored.length;
  }

  async cancelAll(chatId: string | undefined, caller: Principal) {
    const stored = await this.loop.run(actorOf(caller), (m) => cancelQueued(m, chatId, actorOf(caller)));
    return { ok: true as const, cancelled: stored.length, message_ids: stored.map((e) => (e.data as { messageId: string }).messageId) };
  }

  // ---- phone to agent -------------------------------------------------------------------------

  async reply(input: ReplyInput, caller: Principal & { kind: 'device' }, via: 'ws' | 'http') {
    const replyId = randomUUID();
    const [e] = await this.loop.run(actorOf(caller), (m) =>
      recordReply(m, {
        replyId,
        chatId: input.chatId ?? PHONE_CHANNEL_ID,
        text: input.text,
        replyTo: input.replyTo ?? null,
        tokenPrefix: caller.tokenPrefix,
        deviceName: caller.deviceName,
        via,
        clientMsgId: input.clientMsgId ?? null,
      }),
    );
    return {
      ok: true as const,
      reply_id: replyId,
      message_id: input.clientMsgId ?? replyId,
      chat_id: input.chatId ?? PHONE_CHANNEL_ID,
      cursor: e.seq,
    };
  }

  /**
   * `GET /phone/replies`. With `since` (a cursor): replies after it, read-only, for clients that keep their
   * own place. Without it (the host platform's poll): the replies not yet handed to the host, each handed
   * once (`phone.replies_handed` is written before the answer, so neither a re-poll nor a restart hands a
   * reply again, and a reply nobody took is still there after a restart). When there is nothing to answer,
   * the request waits up to `wait` seconds for a reply.
   */
  async replies(q: { since?: number; wait?: number; limit?: number; chatId?: string }, caller: Principal, onAbort: (release: () => void) => void) {
    const limit = q.limit ?? 100;
    const wait = Math.min(q.wait ?? 20, REPLIES_MAX_WAIT);
    const phone = this.loop.models.phoneThreads;
    // Only the host platform (loopback) takes: a paired device reading replies must not take them from the host.
    const take = q.since === undefined && caller.kind === 'operator';
    const since = q.since ?? 0;
    const pending = () => (take ? phone.unhanded(q.chatId) : phone.repliesAfter(since, q.chatId));
    let answered = true;
    if (pending().length === 0 && wait > 0) answered = await this.waitForReply(wait, take ? 0 : since, q.chatId, onAbort);
    if (!take) {
      const list = pending();
      const page = list.slice(0, limit);
      return {
        ok: true as const,
        replies: page.map(replyView),
        cursor: page.length ? page[page.length - 1].seq : Math.max(since, 0),
        more: list.length > page.length,
      };
    }
    // A poll whose caller left (or a relay shutting down) takes nothing: the replies wait for the next poll.
    if (!answered) return { ok: true as const, replies: [], cursor: phone.lastReplySeq(), more: phone.unhanded(q.chatId).length > 0 };
    const stored = await this.loop.run(actorOf(caller), (m) => takeReplies(m, limit, actorOf(caller), q.chatId));
    const ids = stored.length ? (stored[0].data as { replyIds: string[] }).replyIds : [];
    const page = ids.map((id) => phone.reply(id)).filter((r): r is PhoneReply => r !== undefined);
    return {
      ok: true as const,
      replies: page.map(replyView),
      cursor: page.length ? page[page.length - 1].seq : phone.lastReplySeq(),
      more: phone.unhanded(q.chatId).length > 0,
    };
  }

  /** Resolves true when a reply (after `since`, of `chatId`) arrived or the wait ran out; false when the caller left or the relay is stopping. */
  private waitForReply(wait: number, since: number, chatId: string | undefined, onAbort: (release: () => void) => void): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let done = false;
      const finish = (answer: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        sub.unsubscribe();
        this.waiters.delete(stop);
        resolve(answer);
      };
      const stop = () => finish(false);
      const timer = setTimeout(() => finish(true), wait * 1000);
      const sub = this.loop.bus.ofType('phone.reply_received').subscribe({
        next: (e) => {
          if (e.seq > since && (chatId === undefined || e.data.chatId === chatId)) finish(true);
        },
        complete: stop,
      });
      this.waiters.add(stop);
      onAbort(stop);
    });
  }
}
