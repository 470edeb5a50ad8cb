import { Injectable } from '@nestjs/common';
import { actorOf, subscribe, unsubscribe } from '@svc/domain';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { readFrame } from '../common/sockets/parse-frame';
import { ChannelRouter } from '../phone-socket/channel-router';
import type { Envelope } from '../phone-socket/envelope';
import type { PhoneConnection } from '../phone-socket/phone-connection';
import { CancelFrame, ReplyFrame, SubscribeFrame } from './proactive-frames.dto';
import { ThreadDelivery } from './thread-delivery';
import { ThreadViews } from './thread-views';
import { PhoneThreadsService } from './threads.service';

/** The `proactive` channel of the phone socket: subscribe (and get the backlog), unsubscribe, reply, cancel. */
@Injectable()
export class ProactiveChannel {
  constructor(
    private readonly loop: CommandLoop,
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
        const sharePhoneStatus = readFrame(SubscribeFrame, env.payload).share_phone_status;
        const [e] = await this.loop.run(actorOf(p), (m) =>
          subscribe(m, { connId: conn.id, tokenPrefix: p.tokenPrefix, deviceName: p.deviceName, sharePhoneStatus }),
        );
        if (!conn.closed) this.delivery.addSubscriber(conn);
        const replaced = e?.type === 'phone.subscribed' ? e.data.replaced : null;
        const old = replaced ? this.delivery.subscriberSocket(replaced) : undefined;
        if (old) old.send('proactive', 'proactive.unsubscribed', { reason: 'replaced' });
        conn.send(
          'proactive',
          'proactive.subscribed',
          { ok: true, ...this.views.channelInfo(), queued: this.loop.models.phoneThreads.queuedCount() },
          env.id,
        );
        await this.delivery.flushBacklog(conn);
        return;
      }
      case 'proactive.unsubscribe': {
        await this.loop.run(actorOf(p), (m) => unsubscribe(m, conn.id, p.tokenPrefix));
        this.delivery.removeSubscriber(conn);
        conn.send('proactive', 'proactive.unsubscribed', { reason: 'requested' }, env.id);
        return;
      }
      case 'proactive.reply':
      case 'phone.reply': {
        const f = readFrame(ReplyFrame, env.payload);
        const input = { chatId: f.chat_id ?? undefined, text: f.text, replyTo: f.reply_to ?? null, clientMsgId: f.message_id ?? null };
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
        const id = readFrame(CancelFrame, env.payload).message_id;
        const n = await this.threads.cancelIfQueued(id, p);
        conn.send('proactive', 'proactive.cancel.ok', { message_id: id, cancelled: n }, env.id);
        return;
      }
      default:
        conn.error(`unknown proactive message "${env.type}"`, 'unknown_type', { channel: 'proactive' }, env.id);
    }
  }
}
