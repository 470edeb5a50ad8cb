import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import {
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
  unsubscribe,
  type PhoneMessage,
  type PhoneReply,
  type Principal,
} from '@svc/domain';
import type { Surfacing } from '@svc/events';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { EventLog } from '../common/event-log';
import { Scheduler } from '../common/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/tokens';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { CHAT_ID, MAX_TEXT, MESSAGE_ID } from './phone.dto';

const epoch = (ms: number): number => Math.floor(ms / 1000);
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
    private readonly log: EventLog,
    private readonly clock: Clock,
    scheduler: Scheduler,
    router: ChannelRouter,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
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
    return { ok: true as const, ...this.channelInfo(), max: this.config.phoneQueueMax, count: queued.length, messages: queued.map(messageView) };
  }

  message(messageId: string) {
    const msg = this.log.models.phoneThreads.message(messageId);
    if (!msg) throw new DomainError('phone.message_not_found', 'not_found', 'no message with that message_id');
    return { ok: true as const, ...messageView(msg), delivered_to: msg.deliveredTo, queued_delivery: msg.queuedDelivery };
  }

  async cancel(messageId: string, caller: Principal) {
    await this.log.run(actorOf(caller), (m) => cancelMessage(m, messageId, actorOf(caller)));
    return { ok: true as const, cancelled: messageId };
  }

  async cancelAll(chatId: string | undefined, caller: Principal) {
    const stored = await this.log.run(actorOf(caller), (m) => cancelQueued(m, chatId, actorOf(caller)));
    return { ok: true as const, cancelled: stored.length, message_ids: stored.map((e) => (e.data as { messageId: string }).messageId) };
  }

  threads() {
    const phone = this.log.models.phoneThreads;
    return {
      ok: true as const,
      channel_id: PHONE_CHANNEL_ID,
      home_channel_name: this.config.phoneHomeChannelName,
      threads: phone.threadList().map((t) => {
        const lastEntry = t.entries[t.entries.length - 1];
        const queued = phone.queued().filter((m) => m.chatId === t.chatId).length;
        return {
          chat_id: t.chatId,
          title: t.title,
          messages: t.messages,
          replies: t.replies,
          queued,
          last_activity: epoch(t.lastActivity),
          last: lastEntry ? this.entryView(lastEntry) : null,
        };
      }),
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

  async reply(input: { chatId?: string; text: string; replyTo?: string | null }, caller: Principal & { kind: 'device' }, via: 'ws' | 'http') {
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
      }),
    );
    return { ok: true as const, reply_id: replyId, chat_id: input.chatId ?? PHONE_CHANNEL_ID, cursor: e.seq };
  }

  /** Replies after `since`; when there are none, waits up to `waitSeconds` for the next one. */
  async replies(q: { since?: number; wait?: number; limit?: number; chatId?: string }, onAbort: (release: () => void) => void) {
    const since = q.since ?? 0;
    const limit = q.limit ?? 100;
    const wait = q.wait ?? 20;
    let list = this.log.models.phoneThreads.repliesAfter(since, q.chatId);
    if (list.length === 0 && wait > 0) {
      await new Promise<void>((resolve) => {
        let done = false;
        const release = () => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          sub.unsubscribe();
          this.waiters.delete(release);
          resolve();
        };
        const timer = setTimeout(release, wait * 1000);
        const sub = this.log.bus.ofType('phone.reply_received').subscribe({
          next: (e) => {
            if (e.seq > since && (q.chatId === undefined || e.data.chatId === q.chatId)) release();
          },
          complete: release,
        });
        this.waiters.add(release);
        onAbort(release);
      });
      list = this.log.models.phoneThreads.repliesAfter(since, q.chatId);
    }
    const page = list.slice(0, limit);
    return {
      ok: true as const,
      replies: page.map(replyView),
      cursor: page.length ? page[page.length - 1].seq : Math.max(since, 0),
      more: list.length > page.length,
    };
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
        const replaced = e.type === 'phone.subscribed' ? e.data.replaced : null;
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
    token_prefix: r.tokenPrefix,
    device_name: r.deviceName,
    via: r.via,
    ts: epoch(r.at),
    cursor: r.seq,
  };
}

/** `proactive.reply {chat_id?, text, reply_to?}`: the same checks as `POST /phone/replies`. */
function replyPayload(p: Record<string, unknown>): { chatId?: string; text: string; replyTo?: string | null } {
  const bad = (msg: string) => new DomainError('phone.bad_reply', 'invalid', msg);
  if (typeof p.text !== 'string' || p.text.trim().length === 0) throw bad('text: a non-empty string is required');
  if (p.text.length > MAX_TEXT) throw bad(`text: at most ${MAX_TEXT} characters`);
  if (p.chat_id !== undefined && p.chat_id !== null && (typeof p.chat_id !== 'string' || !CHAT_ID.test(p.chat_id)))
    throw bad('chat_id: 1-256 printable characters');
  if (p.reply_to !== undefined && p.reply_to !== null && (typeof p.reply_to !== 'string' || !MESSAGE_ID.test(p.reply_to)))
    throw bad('reply_to: a message id');
  return { chatId: (p.chat_id as string | undefined) ?? undefined, text: p.text, replyTo: (p.reply_to as string | null | undefined) ?? null };
}
