import type { Ev } from '../event';

/**
 * Phone Threads (agent-to-phone messages), the notification companion, the clipboard inbox and image
 * activity. Message and reply text is in the log on purpose: the queue must survive a restart, and it is
 * not a credential. It is never written to the process log (pino).
 */

export type Surfacing = 'default' | 'notification' | 'inbox' | 'session';

/** `POST /phone/message` accepted a message: it is queued until a delivery event says otherwise. */
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
};
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

/** One entry a phone pushed on the `notifications` channel. Ephemeral: the list resets at `relay.started`. */
export type NotificationPosted = Ev<
  'notification.posted',
  {
    entryId: string;
    tokenPrefix: string;
    deviceName: string;
    packageName: string;
    title: string | null;
    text: string | null;
    /** The notification's sub-text (the app sends `sub_text`). Absent in older logs. */
    subText?: string | null;
    /** The phone's own time for the notification (ISO), when it sent one. */
    postedAt: string | null;
    key: string | null;
  }
>;
export type NotificationRemoved = Ev<'notification.removed', { tokenPrefix: string; key: string }>;
export type NotificationEvent = NotificationPosted | NotificationRemoved;

export type ClipboardFormat = 'png' | 'jpeg' | 'gif' | 'webp';
/** An image written into `<svc_home>/inbox/` (0600). A newer one supersedes (deletes) older unread ones. */
export type ClipboardStaged = Ev<
  'clipboard.staged',
  {
    entryId: string;
    fileName: string;
    format: ClipboardFormat;
    sizeBytes: number;
    sha256: string;
    tokenPrefix: string;
    staleAt: string;
    supersedes: string[];
  }
>;
/** A host tool read it (one-shot): the file is deleted. */
export type ClipboardConsumed = Ev<'clipboard.consumed', { entryId: string; by: string }>;
/** Five minutes passed, the operator cleared it, or the file vanished (a host tool read it directly). */
export type ClipboardDiscarded = Ev<'clipboard.discarded', { entryId: string; reason: 'stale' | 'cleared' | 'missing' }>;
export type ClipboardEvent = ClipboardStaged | ClipboardConsumed | ClipboardDiscarded;

export type ImageActivityStatus = 'started' | 'progress' | 'completed' | 'failed';
/** Fed by the host platform; never a prompt, text or tool result. Ephemeral (reset at `relay.started`). */
export type ImageActivityReported = Ev<
  'chat.image_activity',
  { sessionId: string; callId: string; status: ImageActivityStatus; progress: number | null; errorCode: string | null }
>;
export type ImageActivityEvent = ImageActivityReported;
