import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  epoch,
  actorOf,
  cancelMessage,
  cancelQueued,
  DomainError,
  expireMessages,
  messageView,
  PHONE_CHANNEL_ID,
  postMessage,
  recordDeliveries,
  recordFlush,
  recordReply,
  subscribe,
  takeReplies,
  unsubscribe,
  type PhoneMessage,
  type PhoneReply,
  type Principal,
} from '@svc/domain';
import type { Surfacing } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AgentSessionStore } from '../agent-store/agent-session-store';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { Scheduler } from '../common/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/tokens';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { threadRows } from './thread-sessions';
import { CHAT_ID, MAX_TEXT, MESSAGE_ID, REF_ID } from './threads.dto';

/** The longest a reply poll is held (the reference relay's cap; the host platform asks for 25 s). */
export const REPLIES_MAX_WAIT = 30;
/** The shortest id prefix a cancel takes (the desktop CLI shows 12 characters). */
const MIN_ID_PREFIX = 8;
const METADATA_MAX_BYTES = 8 * 1024;
/** How long one frame may wait for a phone's socket to drain. */
const WRITE_TIMEOUT_MS = 10_000;

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

/**
 * Phone Threads: the agent's messages to the subscribed phone (or the queue while none is), the phone's
 * replies, and the `proactive` channel. Deliveries and flushes run one at a time, so a phone sees
 * messages in posting order, backlog first.
 */
@Injectable()
export class PhoneThreadsService implements OnModuleDestroy {
  private delivery: Promise<unknown> = Promise.resolve();
  /** Sockets that subscribed, by connection id (the projection names the current one). */
  private readonly subscribers = new Map<string, PhoneConnection>();
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly log: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
    router: ChannelRouter,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly agentStore: AgentSessionStore,
  ) {
    scheduler.register('phone.expire', (m, now) => expireMessages(m, now));
    router.register('proactive', {
      onFrame: (conn, env) => this.onFrame(conn, env),
      onClose: (conn) => void this.subscribers.delete(conn.id),
    });
  }

  /** Long-polls of `GET /phone/replies` held open right now, waiting for a reply. */
  get heldPolls(): number {
    return this.waiters.size;
  }

  /** Before the server closes: held long-polls answer now instead of holding shutdown for their wait. */
  onModuleDestroy(): void {
    for (const release of [...this.waiters]) release();
  }

  channelInfo() {
    const sub = this.log.models.phoneThreads.subscriber();
    return {
      channel_id: PHONE_CHANNEL_ID,
      home_channel_name: this.config.phoneHomeChannelName,
      enabled: this.config.phoneEnabled,
      subscribed: sub !== null,
      subscriber: sub ? { token_prefix: sub.tokenPrefix, device_name: sub.deviceName, since: epoch(sub.since) } : null,
    };
  }

  // ---- agent to phone -------------------------------------------------------------------------

  async post(input: PostInput, caller: Principal) {
    if (!this.config.phoneEnabled) {
      throw new DomainError('phone.disabled', 'forbidden', 'proactive phone messages are off on this relay: set PHONE_ENABLED=1 and restart it');
    }
    if (input.text.trim().length === 0) throw new DomainError('phone.empty_text', 'invalid', 'text must not be blank');
    if (input.metadata && Buffer.byteLength(JSON.stringify(input.metadata)) > METADATA_MAX_BYTES) {
      throw new DomainError('phone.metadata_too_large', 'invalid', `metadata: at most ${METADATA_MAX_BYTES} bytes of JSON`);
    }
    const messageId = input.messageId ?? randomUUID();
    const fromMetadata = input.metadata?.session_id;
    const sessionId = input.sessionId ?? (typeof fromMetadata === 'string' && CHAT_ID.test(fromMetadata) ? fromMetadata : null);
    const stored = await this.log.run(actorOf(caller), (m, now) =>
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
        this.config.phoneQueueMax,
        now,
      ),
    );
    const duplicate = stored.length === 0;
    if (duplicate) {
      const known = this.log.models.phoneThreads.message(messageId);
      if (known && (known.text !== input.text || known.chatId !== (input.chatId ?? PHONE_CHANNEL_ID))) {
        throw new DomainError('phone.message_id_reused', 'conflict', 'that message_id was already used for a different message', {
          state: known.state,
        });
      }
    }
    // A retry also pumps: a message an earlier attempt could not write goes out now (as backlog).
    await this.enqueue(() => this.pump(duplicate ? new Set() : new Set([messageId])));
    const msg = this.log.models.phoneThreads.message(messageId);
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

  outbound(chatId?: string) {
    const queued = this.log.models.phoneThreads.queued().filter((m) => chatId === undefined || m.chatId === chatId);
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
    const msg = this.log.models.phoneThreads.message(messageId);
    if (!msg) throw new DomainError('phone.message_not_found', 'not_found', 'no message with that message_id');
    return { ok: true as const, ...messageView(msg), delivered_to: msg.deliveredTo, queued_delivery: msg.queuedDelivery };
  }

  /** `DELETE /phone/outbound/{id}`: 404 when unknown, 409 when no longer queued. */
  async cancel(messageId: string, caller: Principal) {
    await this.log.run(actorOf(caller), (m) => cancelMessage(m, messageId, actorOf(caller)));
    return { ok: true as const, cancelled: 1, message_ids: [messageId] };
  }

  /**
   * `DELETE /phone/outbound?message_id=` (the desktop CLI's cancel-one): 200 with `cancelled: 0` when it is
   * not queued. The CLI lists ids cut to 12 characters, so a prefix of at least 8 that names exactly one
   * queued message cancels it; one that names several is 409 `phone.ambiguous_id`.
   */
  async cancelOne(messageId: string, caller: Principal) {
    const stored = await this.log.run(actorOf(caller), (m) => {
      const phone = m.phoneThreads;
      if (phone.message(messageId)) return phone.message(messageId)?.state === 'queued' ? cancelMessage(m, messageId, actorOf(caller)) : [];
      const matches = messageId.length >= MIN_ID_PREFIX ? phone.queued().filter((q) => q.messageId.startsWith(messageId)) : [];
      if (matches.length > 1) {
        throw new DomainError('phone.ambiguous_id', 'conflict', `${matches.length} queued messages start with that id: give more of it`, {
          matches: matches.length,
        });
      }
      return matches.length === 1 ? cancelMessage(m, matches[0].messageId, actorOf(caller)) : [];
    });
    const ids = stored.map((e) => (e.data as { messageId: string }).messageId);
    const state = ids.length === 0 ? (this.log.models.phoneThreads.message(messageId)?.state ?? null) : undefined;
    return { ok: true as const, cancelled: ids.length, message_ids: ids, ...(state !== undefined ? { state } : {}) };
  }

  private async cancelIfQueued(messageId: string, caller: Principal): Promise<number> {
    const stored = await this.log.run(actorOf(caller), (m) =>
      m.phoneThreads.message(messageId)?.state === 'queued' ? cancelMessage(m, messageId, actorOf(caller)) : [],
    );
    return stored.length;
  }

  async cancelAll(chatId: string | undefined, caller: Principal) {
    const stored = await this.log.run(actorOf(caller), (m) => cancelQueued(m, chatId, actorOf(caller)));
    return { ok: true as const, cancelled: stored.length, message_ids: stored.map((e) => (e.data as { messageId: string }).messageId) };
  }

  threads() {
    const phone = this.log.models.phoneThreads;
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
    const t = this.log.models.phoneThreads.threadById(chatId);
    if (!t) throw new DomainError('phone.thread_not_found', 'not_found', 'no thread with that chat_id');
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
      const m = this.log.models.phoneThreads.message(e.id);
      return m ? { kind: 'message' as const, ...messageView(m), ts: epoch(m.postedAt) } : null;
    }
    const r = this.log.models.phoneThreads.reply(e.id);
    return r ? { kind: 'reply' as const, ...replyView(r) } : null;
  }

  // ---- phone to agent -------------------------------------------------------------------------

  async reply(
    input: { chatId?: string; text: string; replyTo?: string | null; clientMsgId?: string | null },
    caller: Principal & { kind: 'device' },
    via: 'ws' | 'http',
  ) {
    if (input.text.trim().length === 0) throw new DomainError('phone.empty_text', 'invalid', 'text must not be blank');
    const replyId = randomUUID();
    const [e] = await this.log.run(actorOf(caller), (m) =>
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
    const phone = this.log.models.phoneThreads;
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
    const stored = await this.log.run(actorOf(caller), (m) => takeReplies(m, limit, actorOf(caller), q.chatId));
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
      const sub = this.log.bus.ofType('phone.reply_received').subscribe({
        next: (e) => {
          if (e.seq > since && (chatId === undefined || e.data.chatId === chatId)) finish(true);
        },
        complete: stop,
      });
      this.waiters.add(stop);
      onAbort(stop);
    });
  }

  // ---- the proactive channel ------------------------------------------------------------------

  private async onFrame(conn: PhoneConnection, env: Envelope): Promise<void> {
    const p = conn.principal!;
    switch (env.type) {
      case 'proactive.subscribe': {
        const share = env.payload.share_phone_status;
        const sharePhoneStatus = typeof share === 'boolean' ? share : true;
        const [e] = await this.log.run(actorOf(p), (m) =>
          subscribe(m, { connId: conn.id, tokenPrefix: p.tokenPrefix, deviceName: p.deviceName, sharePhoneStatus }),
        );
        if (!conn.closed) this.subscribers.set(conn.id, conn);
        const replaced = e?.type === 'phone.subscribed' ? e.data.replaced : null;
        const old = replaced ? this.subscribers.get(replaced) : undefined;
        if (old) old.send('proactive', 'proactive.unsubscribed', { reason: 'replaced' });
        conn.send(
          'proactive',
          'proactive.subscribed',
          { ok: true, ...this.channelInfo(), queued: this.log.models.phoneThreads.queuedCount() },
          env.id,
        );
        await this.enqueue(() => this.flush(conn));
        return;
      }
      case 'proactive.unsubscribe': {
        await this.log.run(actorOf(p), (m) => unsubscribe(m, conn.id, p.tokenPrefix));
        this.subscribers.delete(conn.id);
        conn.send('proactive', 'proactive.unsubscribed', { reason: 'requested' }, env.id);
        return;
      }
      case 'proactive.reply':
      case 'phone.reply': {
        const input = replyPayload(env.payload);
        const r = await this.reply(input, p, 'ws');
        conn.send('proactive', 'proactive.reply.ok', { reply_id: r.reply_id, chat_id: r.chat_id }, env.id);
        // The app settles its "sending" bubble on this (ProactiveMessageHandler: `client_msg_id`, `status`).
        conn.send('proactive', 'proactive.reply.ack', {
          client_msg_id: r.message_id,
          status: 'received',
          reply_id: r.reply_id,
          ts: this.clock.now().getTime(),
        });
        return;
      }
      case 'proactive.cancel': {
        // The socket twin of `DELETE /phone/outbound?message_id=`: a message no longer queued cancels nothing.
        const id = env.payload.message_id;
        if (typeof id !== 'string' || !MESSAGE_ID.test(id))
          throw new DomainError('phone.bad_message_id', 'invalid', 'message_id: a queued message id');
        const n = await this.cancelIfQueued(id, p);
        conn.send('proactive', 'proactive.cancel.ok', { message_id: id, cancelled: n }, env.id);
        return;
      }
      default:
        conn.error(`unknown proactive message "${env.type}"`, 'unknown_type', { channel: 'proactive' }, env.id);
    }
  }

  /** Deliveries and flushes never interleave: each waits for the one before. */
  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.delivery.then(job, job);
    this.delivery = run.catch((err: Error) => this.logger.error({ err: err.message }, 'phone delivery failed'));
    return run;
  }

  /** The subscriber's open socket, if there is one. */
  private current(): PhoneConnection | undefined {
    const sub = this.log.models.phoneThreads.subscriber();
    const conn = sub ? this.subscribers.get(sub.connId) : undefined;
    return conn && !conn.closed && conn.ws.readyState === conn.ws.OPEN ? conn : undefined;
  }

  /** Live delivery: everything queued goes out in order; only the messages in `live` are not backlog. */
  private async pump(live: Set<string>): Promise<void> {
    const conn = this.current();
    if (!conn) return;
    await this.expireDue();
    const sent: { messageId: string; queued: boolean }[] = [];
    for (const msg of this.log.models.phoneThreads.queued()) {
      const queued = !live.has(msg.messageId);
      if (!(await this.write(conn, 'phone.message', this.framePayload(msg, queued)))) break;
      sent.push({ messageId: msg.messageId, queued });
    }
    if (sent.length)
      await this.log.run(actorOf(conn.principal!), (m) => recordDeliveries(m, sent, { connId: conn.id, tokenPrefix: conn.tokenPrefix! }));
  }

  /** Subscribe: the backlog in posting order, each marked `queued_delivery`, then `proactive.backlog.complete`. */
  private async flush(conn: PhoneConnection): Promise<void> {
    if (this.log.models.phoneThreads.subscriber()?.connId !== conn.id) return;
    await this.expireDue();
    const sent: { messageId: string; queued: boolean }[] = [];
    let interrupted = false;
    for (const msg of this.log.models.phoneThreads.queued()) {
      if (this.log.models.phoneThreads.subscriber()?.connId !== conn.id || !(await this.write(conn, 'phone.message', this.framePayload(msg, true)))) {
        interrupted = true;
        break;
      }
      sent.push({ messageId: msg.messageId, queued: true });
    }
    const to = { connId: conn.id, tokenPrefix: conn.tokenPrefix! };
    await this.log.run(actorOf(conn.principal!), (m) => recordFlush(m, sent, to, interrupted));
    if (!interrupted) await this.write(conn, 'proactive.backlog.complete', { count: sent.length, ts: epoch(this.clock.now().getTime()) });
  }

  /** A message past its 24 hours never goes out, even when no sweep ran yet (a relay that was down a day). */
  private async expireDue(): Promise<void> {
    await this.log.run('system', (m, now) => expireMessages(m, now));
  }

  private framePayload(msg: PhoneMessage, queued: boolean): Record<string, unknown> {
    return {
      message_id: msg.messageId,
      chat_id: msg.chatId,
      channel_id: PHONE_CHANNEL_ID,
      text: msg.text,
      title: msg.title,
      surfacing: msg.surfacing ?? 'default',
      reply_to: msg.replyTo,
      metadata: msg.metadata,
      ts: epoch(msg.postedAt),
      // The app reads `sent_at` in epoch ms (ProactiveMessageHandler.parse).
      sent_at: msg.postedAt,
      ...(queued ? { queued_delivery: true } : {}),
    };
  }

  /**
   * Resolves once the frame is handed to the socket; false when the socket is gone, or when a phone that
   * stopped reading keeps it from draining for WRITE_TIMEOUT_MS (the message then stays queued: at least
   * once, phones de-duplicate by message_id).
   */
  private write(conn: PhoneConnection, type: string, payload: Record<string, unknown>): Promise<boolean> {
    if (conn.closed || conn.ws.readyState !== conn.ws.OPEN) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), WRITE_TIMEOUT_MS);
      timer.unref();
      try {
        conn.ws.send(JSON.stringify({ channel: 'proactive', type, id: randomUUID(), payload }), (err) => {
          clearTimeout(timer);
          resolve(!err);
        });
      } catch {
        clearTimeout(timer);
        resolve(false);
      }
    });
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

/** `proactive.reply {chat_id?, text, reply_to?, message_id?, ts?}`: the same checks as `POST /phone/replies`. */
function replyPayload(p: Record<string, unknown>): { chatId?: string; text: string; replyTo?: string | null; clientMsgId: string | null } {
  const bad = (msg: string) => new DomainError('phone.bad_reply', 'invalid', msg);
  if (typeof p.text !== 'string' || p.text.trim().length === 0) throw bad('text: a non-empty string is required');
  if (p.text.length > MAX_TEXT) throw bad(`text: at most ${MAX_TEXT} characters`);
  if (p.chat_id !== undefined && p.chat_id !== null && (typeof p.chat_id !== 'string' || !CHAT_ID.test(p.chat_id)))
    throw bad('chat_id: 1-256 printable characters');
  if (p.reply_to !== undefined && p.reply_to !== null && (typeof p.reply_to !== 'string' || !REF_ID.test(p.reply_to)))
    throw bad('reply_to: a message id (1-256 printable characters)');
  if (p.message_id !== undefined && p.message_id !== null && (typeof p.message_id !== 'string' || !REF_ID.test(p.message_id)))
    throw bad('message_id: 1-256 printable characters');
  return {
    chatId: (p.chat_id as string | undefined) ?? undefined,
    text: p.text,
    replyTo: (p.reply_to as string | null | undefined) ?? null,
    clientMsgId: (p.message_id as string | null | undefined) ?? null,
  };
}
