import type { NewEvent, PhoneMessageContent, PhoneReplyReceived, PhoneThreadsEvent, Surfacing } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';
import type { PhoneMessage } from './threads.projection';

/** Spec 2.5 / 8: a queued message waits at most 24 hours for a subscriber. */
export const PHONE_QUEUE_TTL_SECONDS = 24 * 3600;
export const SURFACINGS: readonly Surfacing[] = ['default', 'notification', 'inbox', 'session'];
/** The platform channel id (spec 2.6): fixed. */
export const PHONE_CHANNEL_ID = 'phone';

export type PostMessage = PhoneMessageContent;

/**
 * A message enters the queue (every message does: delivery to a subscriber is a later event). Past the
 * bound, the oldest queued messages are dropped first. A known `messageId` decides nothing (idempotent
 * retry): the caller reads the existing message's state.
 */
export function postMessage(m: ReadModels, cmd: PostMessage, queueMax: number, now: Date): NewEvent<PhoneThreadsEvent>[] {
  if (m.phoneThreads.message(cmd.messageId)) return [];
  const out: NewEvent<PhoneThreadsEvent>[] = [
    {
      type: 'phone.message_posted',
      data: { ...cmd, expiresAt: new Date(now.getTime() + PHONE_QUEUE_TTL_SECONDS * 1000).toISOString() },
    },
  ];
  const queued = m.phoneThreads.queued();
  const overflow = queued.length + 1 - Math.max(1, queueMax);
  for (const old of queued.slice(0, Math.max(0, overflow))) {
    out.push({ type: 'phone.message_dropped', data: { messageId: old.messageId, chatId: old.chatId, reason: 'queue_full' } });
  }
  return out;
}

/** The sweep: queued messages past their 24 hours. */
export function expireMessages(m: ReadModels, now: Date): NewEvent<PhoneThreadsEvent>[] {
  return m.phoneThreads
    .queued()
    .filter((q) => q.expiresAt <= now.getTime())
    .map((q) => ({ type: 'phone.message_expired', data: { messageId: q.messageId, chatId: q.chatId } }));
}

/** Cancel one queued message: 404 when unknown, 409 when it already left the queue. */
export function cancelMessage(m: ReadModels, messageId: string, by: string): NewEvent<PhoneThreadsEvent>[] {
  const msg = m.phoneThreads.message(messageId);
  if (!msg) throw new DomainError('phone.message_not_found', 'not_found', 'no message with that message_id');
  if (msg.state !== 'queued') {
    throw new DomainError('phone.not_queued', 'conflict', `that message is no longer queued (it was ${msg.state})`, { state: msg.state });
  }
  return [{ type: 'phone.message_cancelled', data: { messageId, chatId: msg.chatId, by } }];
}

/** Cancel every queued message (of one chat when `chatId` is given). */
export function cancelQueued(m: ReadModels, chatId: string | undefined, by: string): NewEvent<PhoneThreadsEvent>[] {
  return m.phoneThreads
    .queued()
    .filter((q) => chatId === undefined || q.chatId === chatId)
    .map((q) => ({ type: 'phone.message_cancelled', data: { messageId: q.messageId, chatId: q.chatId, by } }));
}

export type Subscribe = { connId: string; tokenPrefix: string; deviceName: string; sharePhoneStatus: boolean };

/** The latest subscriber wins; the displaced connection is named so it can be told. The subscriber saying it again changes nothing. */
export function subscribe(m: ReadModels, cmd: Subscribe): NewEvent<PhoneThreadsEvent>[] {
  const current = m.phoneThreads.subscriber();
  if (current && current.connId === cmd.connId && current.sharePhoneStatus === cmd.sharePhoneStatus) return [];
  const replaced = current && current.connId !== cmd.connId ? current.connId : null;
  return [{ type: 'phone.subscribed', data: { ...cmd, replaced } }];
}

export function unsubscribe(m: ReadModels, connId: string, tokenPrefix: string): NewEvent<PhoneThreadsEvent>[] {
  if (m.phoneThreads.subscriber()?.connId !== connId) return [];
  return [{ type: 'phone.unsubscribed', data: { connId, tokenPrefix, reason: 'requested' } }];
}

/** Deliveries that happened (written to the socket); a message that left the queue meanwhile is skipped. */
export function recordDeliveries(
  m: ReadModels,
  deliveries: readonly { messageId: string; queued: boolean }[],
  to: { connId: string; tokenPrefix: string },
): NewEvent<PhoneThreadsEvent>[] {
  const out: NewEvent<PhoneThreadsEvent>[] = [];
  for (const d of deliveries) {
    const msg = m.phoneThreads.message(d.messageId);
    if (msg?.state === 'queued')
      out.push({ type: 'phone.message_delivered', data: { messageId: d.messageId, chatId: msg.chatId, ...to, queued: d.queued } });
  }
  return out;
}

/** The end of a backlog flush: what went out, and what is still queued (an interrupted flush leaves the rest). */
export function recordFlush(
  m: ReadModels,
  deliveries: readonly { messageId: string; queued: boolean }[],
  to: { connId: string; tokenPrefix: string },
  interrupted: boolean,
): NewEvent<PhoneThreadsEvent>[] {
  const delivered = recordDeliveries(m, deliveries, to);
  // An empty backlog sent whole records nothing (a phone may subscribe again and again).
  if (deliveries.length === 0 && !interrupted) return [];
  const remaining = m.phoneThreads.queuedCount() - delivered.length;
  return [...delivered, { type: 'phone.backlog_flushed', data: { ...to, count: deliveries.length, remaining, interrupted } }];
}

/** A phone's reply, as `phone.reply_received` records it. */
export type Reply = PhoneReplyReceived['data'];

export function recordReply(_m: ReadModels, cmd: Reply): NewEvent<PhoneThreadsEvent>[] {
  return [{ type: 'phone.reply_received', data: cmd }];
}

/**
 * The host platform takes the replies it has not taken yet (oldest first, at most `limit`, of one chat
 * when `chatId` is given). Nothing to take decides nothing.
 */
export function takeReplies(m: ReadModels, limit: number, by: string, chatId?: string): NewEvent<PhoneThreadsEvent>[] {
  const replyIds = m.phoneThreads
    .unhanded(chatId)
    .slice(0, Math.max(1, limit))
    .map((r) => r.replyId);
  return replyIds.length ? [{ type: 'phone.replies_handed', data: { replyIds, by } }] : [];
}

/** The wire view of a message (WIRE.md: epoch seconds). */
export function messageView(msg: PhoneMessage) {
  return {
    message_id: msg.messageId,
    chat_id: msg.chatId,
    text: msg.text,
    title: msg.title,
    surfacing: msg.surfacing,
    reply_to: msg.replyTo,
    metadata: msg.metadata,
    state: msg.state,
    posted_at: Math.floor(msg.postedAt / 1000),
    expires_at: Math.floor(msg.expiresAt / 1000),
    state_at: Math.floor(msg.stateAt / 1000),
  };
}
