import { Injectable } from '@nestjs/common';
import { actorOf, DomainError, subscribe, unsubscribe } from '@svc/domain';
import { Clock } from '../common/clock';
import { CommandLoop } from '../common/command-loop';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { ThreadDelivery } from './thread-delivery';
import { ThreadViews } from './thread-views';
import { CHAT_ID, MAX_TEXT, MESSAGE_ID, REF_ID } from './threads.dto';
import { PhoneThreadsService, type ReplyInput } from './threads.service';

/** The `proactive` channel of the phone socket: subscribe (and get the backlog), unsubscribe, reply, cancel. */
@Injectable()
export class ProactiveChannel {
  constructor(
    private readonly log: CommandLoop,
    private readonly clock: Clock,
    private readonly threads: PhoneThreadsService,
    private readonly delivery: ThreadDelivery,
    private readonly views: ThreadViews,
    router: ChannelRouter,
  ) {
    router.register('proactive', {
      onFrame: (conn, env) => this.onFrame(conn, env),
      onClose: (conn) => this.delivery.removeSubscriber(conn),
    });
  }

  private async onFrame(conn: PhoneConnection, env: Envelope): Promise<void> {
    const p = conn.principal!;
    switch (env.type) {
      case 'proactive.subscribe': {
        const share = env.payload.share_phone_status;
        const sharePhoneStatus = typeof share === 'boolean' ? share : true;
        const [e] = await this.log.run(actorOf(p), (m) =>
          subscribe(m, { connId: conn.id, tokenPrefix: p.tokenPrefix, deviceName: p.deviceName, sharePhoneStatus }),
        );
        if (!conn.closed) this.delivery.addSubscriber(conn);
        const replaced = e?.type === 'phone.subscribed' ? e.data.replaced : null;
        const old = replaced ? this.delivery.subscriberSocket(replaced) : undefined;
        if (old) old.send('proactive', 'proactive.unsubscribed', { reason: 'replaced' });
        conn.send(
          'proactive',
          'proactive.subscribed',
          { ok: true, ...this.views.channelInfo(), queued: this.log.models.phoneThreads.queuedCount() },
          env.id,
        );
        await this.delivery.flushBacklog(conn);
        return;
      }
      case 'proactive.unsubscribe': {
        await this.log.run(actorOf(p), (m) => unsubscribe(m, conn.id, p.tokenPrefix));
        this.delivery.removeSubscriber(conn);
        conn.send('proactive', 'proactive.unsubscribed', { reason: 'requested' }, env.id);
        return;
      }
      case 'proactive.reply':
      case 'phone.reply': {
        const input = replyPayload(env.payload);
        const r = await this.threads.reply(input, p, 'ws');
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
        const n = await this.threads.cancelIfQueued(id, p);
        conn.send('proactive', 'proactive.cancel.ok', { message_id: id, cancelled: n }, env.id);
        return;
      }
      default:
        conn.error(`unknown proactive message "${env.type}"`, 'unknown_type', { channel: 'proactive' }, env.id);
    }
  }
}

/** `proactive.reply {chat_id?, text, reply_to?, message_id?, ts?}`: the same checks as `POST /phone/replies`. */
function replyPayload(p: Record<string, unknown>): ReplyInput & { clientMsgId: string | null } {
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
