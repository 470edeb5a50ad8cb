import type { Ev } from '../event';

/**
 * Phone Threads (agent-to-phone messages and the phone's replies). Message and reply text is in the log on purpose: the queue must survive a restart, and it is
 * not a credential. It is never written to the process log (pino).
 */

export type Surfacing = 'default' | 'notification' | 'inbox' | 'session';

/** A message as `POST /phone/message` accepted it. */
export type PhoneMessageContent = {
  messageId: string;
  chatId: string;
  text: string;
  title: string | null;
  surfacing: Surfacing | null;
  replyTo: string | null;
  metadata: Record<string, unknown> | null;
  /** The host's (gateway's) session for this conversation, when the platform named it. Absent in older logs. */
  sessionId?: string | null;
  /** The data key its text, title and metadata are sealed under in the record (see personal-data.ts). */
  sealedWith?: string;
  /** Its key was destroyed: text is empty, title and metadata null. */
  forgotten?: boolean;
};
/** `POST /phone/message` accepted a message: it is queued until a delivery event says otherwise. */
export type PhoneMessagePosted = Ev<
  'phone.message_posted',
  PhoneMessageContent & {
    /** When the queue lets it go (24 hours after posting). */
    expiresAt: string;
  }
>;
/** Written to the subscribed phone's socket (`queued: true` when it came from the backlog). */
export type PhoneMessageDelivered = Ev<
  'phone.message_delivered',
  { messageId: string; chatId: string; connId: string; tokenPrefix: string; queued: boolean }
>;
/** Left the queue without being delivered. */
export type PhoneMessageDropped = Ev<'phone.message_dropped', { messageId: string; chatId: string; reason: 'queue_full' }>;
export type PhoneMessageExpired = Ev<'phone.message_expired', { messageId: string; chatId: string }>;
export type PhoneMessageCancelled = Ev<'phone.message_cancelled', { messageId: string; chatId: string; by: string }>;

/** `proactive.subscribe`: the latest subscriber wins (`replaced` names the connection it displaced). */
export type PhoneSubscribed = Ev<
  'phone.subscribed',
  { connId: string; tokenPrefix: string; deviceName: string; sharePhoneStatus: boolean; replaced: string | null }
>;
export type PhoneUnsubscribed = Ev<'phone.unsubscribed', { connId: string; tokenPrefix: string; reason: 'requested' }>;
/** A backlog flush ended: `count` delivered, `remaining` still queued (an interrupted flush leaves them). */
export type PhoneBacklogFlushed = Ev<
  'phone.backlog_flushed',
  { connId: string; tokenPrefix: string; count: number; remaining: number; interrupted: boolean }
>;
export type PhoneReplyReceived = Ev<
  'phone.reply_received',
  {
    replyId: string;
    chatId: string;
    text: string;
    replyTo: string | null;
    tokenPrefix: string;
    deviceName: string;
    via: 'ws' | 'http';
    /** The phone's own id for the reply (`proactive.reply {message_id}`), echoed in `proactive.reply.ack`. Absent in older logs. */
    clientMsgId?: string | null;
    /** The data key its text is sealed under in the record. */
    sealedWith?: string;
    /** Its key was destroyed: text is empty. */
    forgotten?: boolean;
  }
>;
/**
 * The host platform took these replies (`GET /phone/replies` without a cursor): each reply is handed to
 * the host once, and a restart neither hands it again nor loses one not yet taken.
 */
export type PhoneRepliesHanded = Ev<'phone.replies_handed', { replyIds: string[]; by: string }>;

export type PhoneThreadsEvent =
  | PhoneMessagePosted
  | PhoneMessageDelivered
  | PhoneMessageDropped
  | PhoneMessageExpired
  | PhoneMessageCancelled
  | PhoneSubscribed
  | PhoneUnsubscribed
  | PhoneBacklogFlushed
  | PhoneReplyReceived
  | PhoneRepliesHanded;
