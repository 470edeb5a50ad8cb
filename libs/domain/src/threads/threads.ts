import type { BridgeEvent, NewEvent, PhoneMessageContent, PhoneReplyReceived, PhoneThreadsEvent, Surfacing } from '@svc/events';
import { handOverReplied } from '../bridge/hand-over';
import { epoch } from '../epoch';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';
import type { PhoneMessage, Thread } from './threads.projection';

/** Spec 2.5 / 8: a queued message waits at most 24 hours for a subscriber. */
export const PHONE_QUEUE_TTL_SECONDS = 24 * 3600;
export const SURFACINGS: readonly Surfacing[] = ['default', 'notification', 'inbox', 'session'];
/** The platform channel id (spec 2.6): fixed. */
export const PHONE_CHANNEL_ID = 'phone';
/** The most a message's `metadata` may hold, as UTF-8 JSON. */
export const METADATA_MAX_BYTES = 8 * 1024;
/** The shortest id prefix a cancel takes (the desktop CLI shows 12 characters). */
export const MIN_ID_PREFIX = 8;

export type PostMessage = PhoneMessageContent;

/** The relay's Threads settings a post is decided under: the PHONE_ENABLED switch and the queue bound. */
export type PostPolicy = { enabled: boolean; queueMax: number };

const utf8 = new TextEncoder();

const blankText = () => new DomainError('phone.empty_text', 'invalid', 'text must not be blank');

/**
 * A message enters the queue (every message does: delivery to a subscriber is a later event). Past the
 * bound, the oldest queued messages are dropped first. A known `messageId` decides nothing (idempotent
 * retry): the caller reads the existing message's state. Refused while proactive messages are off, for
 * blank text, and for metadata past METADATA_MAX_BYTES of JSON.
 */
export function postMessage(m: ReadModels, cmd: PostMessage, policy: PostPolicy, now: Date): NewEvent<PhoneThreadsEvent>[] {
  if (!policy.enabled) {
    throw new DomainError('phone.disabled', 'forbidden', 'proactive phone messages are off on this relay: set PHONE_ENABLED=1 and restart it');
  }
  if (cmd.text.trim().length === 0) throw blankText();
  if (cmd.metadata && utf8.encode(JSON.stringify(cmd.metadata)).length > METADATA_MAX_BYTES) {
    throw new DomainError('phone.metadata_too_large', 'invalid', `metadata: at most ${METADATA_MAX_BYTES} bytes of JSON`);
  }
  if (m.phoneThreads.message(cmd.messageId)) return [];
  const out: NewEvent<PhoneThreadsEvent>[] = [
    {
      type: 'phone.message_posted',
      data: { ...cmd, expiresAt: new Date(now.getTime() + PHONE_QUEUE_TTL_SECONDS * 1000).toISOString() },
    },
  ];
  const queued = m.phoneThreads.queued();
  const overflow = queued.length + 1 - Math.max(1, policy.queueMax);
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

/** The message with `messageId`, while the read model holds it; 404 otherwise (a read, a cancel). */
export function messageOf(m: ReadModels, messageId: string): PhoneMessage {
  const msg = m.phoneThreads.message(messageId);
  if (!msg) throw new DomainError('phone.message_not_found', 'not_found', 'no message with that message_id');
  return msg;
}

/** The thread with `chatId`; 404 otherwise (the phone's and the console's read of one thread). */
export function threadOf(m: ReadModels, chatId: string): Thread {
  const t = m.phoneThreads.threadById(chatId);
  if (!t) throw new DomainError('phone.thread_not_found', 'not_found', 'no thread with that chat_id');
  return t;
}

/** Cancel one queued message: 404 when unknown, 409 when it already left the queue. */
export function cancelMessage(m: ReadModels, messageId: string, by: string): NewEvent<PhoneThreadsEvent>[] {
  const msg = messageOf(m, messageId);
  if (msg.state !== 'queued') {
    throw new DomainError('phone.not_queued', 'conflict', `that message is no longer queued (it was ${msg.state})`, { state: msg.state });
  }
  return [{ type: 'phone.message_cancelled', data: { messageId, chatId: msg.chatId, by } }];
}

/** Cancel one message if it is still queued; one that left the queue (or is unknown) cancels nothing. */
export function cancelIfQueued(m: ReadModels, messageId: string, by: string): NewEvent<PhoneThreadsEvent>[] {
  return m.phoneThreads.message(messageId)?.state === 'queued' ? cancelMessage(m, messageId, by) : [];
}

/**
 * Cancel by a message id or a prefix of one (the desktop CLI lists ids cut to 12 characters): a known id
 * cancels that message if it is still queued; otherwise a prefix of at least MIN_ID_PREFIX characters
 * that names exactly one queued message cancels it, and one that names several is refused (409
 * `phone.ambiguous_id`). Anything else cancels nothing.
 */
export function cancelByIdOrPrefix(m: ReadModels, idOrPrefix: string, by: string): NewEvent<PhoneThreadsEvent>[] {
  const phone = m.phoneThreads;
  if (phone.message(idOrPrefix)) return cancelIfQueued(m, idOrPrefix, by);
  const matches = idOrPrefix.length >= MIN_ID_PREFIX ? phone.queued().filter((q) => q.messageId.startsWith(idOrPrefix)) : [];
  if (matches.length > 1) {
    throw new DomainError('phone.ambiguous_id', 'conflict', `${matches.length} queued messages start with that id: give more of it`, {
      matches: matches.length,
    });
  }
  return matches.length === 1 ? cancelMessage(m, matches[0].messageId, by) : [];
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

/** A phone's reply is recorded unless its text is blank; one answering a Thread hand-over also ends it. */
export function recordReply(m: ReadModels, cmd: Reply): NewEvent<PhoneThreadsEvent | BridgeEvent>[] {
  if (cmd.text.trim().length === 0) throw blankText();
  return [{ type: 'phone.reply_received', data: cmd }, ...handOverReplied(m, cmd)];
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
    posted_at: epoch(msg.postedAt),
    expires_at: epoch(msg.expiresAt),
    state_at: epoch(msg.stateAt),
  };
}
