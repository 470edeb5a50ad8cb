import { Inject, Injectable } from '@nestjs/common';
import { epoch, actorOf, expireMessages, PHONE_CHANNEL_ID, recordDeliveries, recordFlush, type PhoneMessage } from '@svc/domain';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER } from '../common/auth/tokens';
import type { PhoneConnection } from '../phone-socket/phone-connection';

/** How long one frame may wait for a phone's socket to drain. */
const WRITE_TIMEOUT_MS = 10_000;

/**
 * The way out to the subscribed phone: the sockets that subscribed, live delivery of new messages and
 * the backlog flush on subscribe. Deliveries and flushes run one at a time, so a phone sees messages in
 * posting order, backlog first. A message past its 24 hours never goes out.
 */
@Injectable()
export class ThreadDelivery {
  private delivery: Promise<unknown> = Promise.resolve();
  /** Sockets that subscribed, by connection id (the projection names the current one). */
  private readonly subscribers = new Map<string, PhoneConnection>();

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    scheduler.register('phone.expire', (m, now) => expireMessages(m, now));
  }

  /** A socket that subscribed (once its subscription is durable). */
  addSubscriber(conn: PhoneConnection): void {
    this.subscribers.set(conn.id, conn);
  }

  subscriberSocket(connId: string): PhoneConnection | undefined {
    return this.subscribers.get(connId);
  }

  removeSubscriber(conn: PhoneConnection): void {
    this.subscribers.delete(conn.id);
  }

  /** Everything queued goes to the subscriber, in order; only the messages in `live` are not backlog. */
  deliver(live: Set<string>): Promise<void> {
    return this.enqueue(() => this.pump(live));
  }

  /** The backlog to a socket that just subscribed, then `proactive.backlog.complete`. */
  flushBacklog(conn: PhoneConnection): Promise<void> {
    return this.enqueue(() => this.flush(conn));
  }

  /** Deliveries and flushes never interleave: each waits for the one before. */
  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.delivery.then(job, job);
    this.delivery = run.catch((err: Error) => this.logger.error({ err: err.message }, 'phone delivery failed'));
    return run;
  }

  /** The subscriber's open socket, if there is one. */
  private current(): PhoneConnection | undefined {
    const sub = this.loop.models.phoneThreads.subscriber();
    const conn = sub ? this.subscribers.get(sub.connId) : undefined;
    return conn && !conn.closed && conn.ws.readyState === conn.ws.OPEN ? conn : undefined;
  }

  private async pump(live: Set<string>): Promise<void> {
    const conn = this.current();
    if (!conn) return;
    await this.expireDue();
    const sent: { messageId: string; queued: boolean }[] = [];
    for (const msg of this.loop.models.phoneThreads.queued()) {
      const queued = !live.has(msg.messageId);
      if (!(await this.write(conn, 'phone.message', framePayload(msg, queued)))) break;
      sent.push({ messageId: msg.messageId, queued });
    }
    if (sent.length)
      await this.loop.run(actorOf(conn.principal!), (m) => recordDeliveries(m, sent, { connId: conn.id, tokenPrefix: conn.tokenPrefix! }));
  }

  /** Subscribe: the backlog in posting order, each marked `queued_delivery`, then `proactive.backlog.complete`. */
  private async flush(conn: PhoneConnection): Promise<void> {
    if (this.loop.models.phoneThreads.subscriber()?.connId !== conn.id) return;
    await this.expireDue();
    const sent: { messageId: string; queued: boolean }[] = [];
    let interrupted = false;
    for (const msg of this.loop.models.phoneThreads.queued()) {
      if (this.loop.models.phoneThreads.subscriber()?.connId !== conn.id || !(await this.write(conn, 'phone.message', framePayload(msg, true)))) {
        interrupted = true;
        break;
      }
      sent.push({ messageId: msg.messageId, queued: true });
    }
    const to = { connId: conn.id, tokenPrefix: conn.tokenPrefix! };
    await this.loop.run(actorOf(conn.principal!), (m) => recordFlush(m, sent, to, interrupted));
    if (!interrupted) await this.write(conn, 'proactive.backlog.complete', { count: sent.length, ts: epoch(this.clock.now().getTime()) });
  }

  /** A message past its 24 hours never goes out, even when no sweep ran yet (a relay that was down a day). */
  private async expireDue(): Promise<void> {
    await this.loop.run('system', (m, now) => expireMessages(m, now));
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

/** A message as the `phone.message` frame carries it. */
function framePayload(msg: PhoneMessage, queued: boolean): Record<string, unknown> {
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
