import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { PhoneMessageContent, PhoneReplyReceived, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { forgottenPersonal } from '@svc/events/personal-fields';

export type MessageState = 'queued' | 'delivered' | 'dropped' | 'expired' | 'cancelled';

type MutablePhoneMessage = PhoneMessageContent & {
  by: string;
  postedAt: number;
  expiresAt: number;
  state: MessageState;
  stateAt: number;
  /** Set once delivered: the session it went to, and whether it came from the backlog. */
  deliveredTo: string | null;
  queuedDelivery: boolean;
};

type MutablePhoneReply = PhoneReplyReceived['data'] & {
  /** The reply event's seq: a cursor that only grows, across restarts. */
  seq: number;
  at: number;
  /** Taken by the host platform (`phone.replies_handed`): a cursorless poll never answers it again. */
  handed: boolean;
};

type MutableThreadEntry = { kind: 'message' | 'reply'; id: string };
type MutableThread = {
  chatId: string;
  entries: ThreadEntry[];
  messages: number;
  replies: number;
  lastActivity: number;
  title: string | null;
  /** The data key of the message the title came from (forgetting it empties the title). */
  titleKey?: string;
  /** The host session of the conversation, the latest a posted message named. */
  sessionId?: string | null;
};

type MutableSubscriber = { connId: string; tokenPrefix: string; deviceName: string; sharePhoneStatus: boolean; since: number };

/** What this projection hands out, read-only: only its events change them. */
export type PhoneMessage = DeepReadonly<MutablePhoneMessage>;
export type PhoneReply = DeepReadonly<MutablePhoneReply>;
export type ThreadEntry = DeepReadonly<MutableThreadEntry>;
export type Thread = DeepReadonly<MutableThread>;
export type Subscriber = DeepReadonly<MutableSubscriber>;

/** Retention of the read model (the log keeps everything). */
export const THREAD_ENTRIES_KEPT = 100;
export const THREADS_KEPT = 200;
export const REPLIES_KEPT = 500;

type State = {
  messages: MutablePhoneMessage[];
  queue: string[];
  replies: MutablePhoneReply[];
  threads: MutableThread[];
  subscriber: MutableSubscriber | null;
};

/**
 * The phone queue, conversation state per chat and the replies feed. The queue and threads survive a
 * restart (a projection of the log); the subscriber is a socket, so it resets at `relay.started`.
 */
export class PhoneThreadsProjection implements Projection<State> {
  private readonly messages = new Map<string, MutablePhoneMessage>();
  /** Queued message ids in posting order (the flush order). */
  private queue: string[] = [];
  private replies: MutablePhoneReply[] = [];
  private readonly threads = new Map<string, MutableThread>();
  private sub: MutableSubscriber | null = null;

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    const at = eventAtMs(e);
    switch (e.type) {
      case 'relay.started':
        this.sub = null;
        break;
      case 'phone.disconnected':
        if (this.sub?.connId === e.data.connId) this.sub = null;
        break;
      case 'session.revoked':
      case 'session.expired':
        if (this.sub?.tokenPrefix === e.data.tokenPrefix) this.sub = null;
        break;
      case 'phone.subscribed':
        this.sub = {
          connId: e.data.connId,
          tokenPrefix: e.data.tokenPrefix,
          deviceName: e.data.deviceName,
          sharePhoneStatus: e.data.sharePhoneStatus,
          since: at,
        };
        break;
      case 'phone.unsubscribed':
        if (this.sub?.connId === e.data.connId) this.sub = null;
        break;
      case 'phone.message_posted': {
        const d = e.data;
        if (this.messages.has(d.messageId)) break;
        this.messages.set(d.messageId, {
          messageId: d.messageId,
          chatId: d.chatId,
          text: d.text,
          title: d.title,
          surfacing: d.surfacing,
          replyTo: d.replyTo,
          metadata: d.metadata,
          ...(d.sessionId ? { sessionId: d.sessionId } : {}),
          ...(d.sealedWith ? { sealedWith: d.sealedWith } : {}),
          ...(d.forgotten ? { forgotten: true } : {}),
          by: e.actor,
          postedAt: at,
          expiresAt: isoMs(d.expiresAt),
          state: 'queued',
          stateAt: at,
          deliveredTo: null,
          queuedDelivery: false,
        });
        this.queue.push(d.messageId);
        const t = this.thread(d.chatId, at);
        t.messages++;
        if (d.title) {
          t.title = d.title;
          if (d.sealedWith) t.titleKey = d.sealedWith;
          else delete t.titleKey;
        }
        if (d.sessionId) t.sessionId = d.sessionId;
        this.addEntry(t, { kind: 'message', id: d.messageId });
        break;
      }
      case 'phone.message_delivered':
        this.settle(e.data.messageId, 'delivered', at, (m) => {
          m.deliveredTo = e.data.tokenPrefix;
          m.queuedDelivery = e.data.queued;
        });
        break;
      case 'phone.message_dropped':
        this.settle(e.data.messageId, 'dropped', at);
        break;
      case 'phone.message_expired':
        this.settle(e.data.messageId, 'expired', at);
        break;
      case 'phone.message_cancelled':
        this.settle(e.data.messageId, 'cancelled', at);
        break;
      case 'phone.reply_received': {
        const d = e.data;
        if (this.replies.some((r) => r.seq >= e.seq)) break;
        this.replies.push({ ...d, seq: e.seq, at, handed: false });
        // Past the bound, the oldest reply the host already took goes first; only a host that took none of
        // the last 500 loses the oldest untaken one.
        while (this.replies.length > REPLIES_KEPT) {
          const i = this.replies.findIndex((r) => r.handed);
          this.replies.splice(i < 0 ? 0 : i, 1);
        }
        const t = this.thread(d.chatId, at);
        t.replies++;
        this.addEntry(t, { kind: 'reply', id: d.replyId });
        break;
      }
      case 'personal.forgotten':
        this.forgetKeys(new Set(e.data.keys), at);
        break;
      case 'phone.replies_handed': {
        const ids = new Set(e.data.replyIds);
        for (const r of this.replies) if (ids.has(r.replyId)) r.handed = true;
        break;
      }
      default:
        break;
    }
  }

  message(id: string): PhoneMessage | undefined {
    return this.messages.get(id);
  }

  /** Queued messages, oldest first (the order a flush delivers them). */
  queued(): readonly PhoneMessage[] {
    return this.queue.map((id) => this.messages.get(id)!);
  }

  queuedCount(): number {
    return this.queue.length;
  }

  subscriber(): Subscriber | null {
    return this.sub;
  }

  /** Replies with a cursor past `afterSeq`, oldest first. */
  repliesAfter(afterSeq: number, chatId?: string): readonly PhoneReply[] {
    return this.replies.filter((r) => r.seq > afterSeq && (chatId === undefined || r.chatId === chatId));
  }

  /** Replies the host platform has not taken yet, oldest first. */
  unhanded(chatId?: string): readonly PhoneReply[] {
    return this.replies.filter((r) => !r.handed && (chatId === undefined || r.chatId === chatId));
  }

  reply(id: string): PhoneReply | undefined {
    return this.replies.find((r) => r.replyId === id);
  }

  lastReplySeq(): number {
    return this.replies.length ? this.replies[this.replies.length - 1].seq : 0;
  }

  /** Threads, most recent activity first. */
  threadList(): readonly Thread[] {
    return [...this.threads.values()].sort((a, b) => b.lastActivity - a.lastActivity);
  }

  threadById(chatId: string): Thread | undefined {
    return this.threads.get(chatId);
  }

  snapshot(): State {
    return {
      messages: [...this.messages.values()].map((m) => ({ ...m })),
      queue: [...this.queue],
      replies: this.replies.map((r) => ({ ...r })),
      threads: [...this.threads.values()].map((t) => ({ ...t, entries: t.entries.map((x) => ({ ...x })) })),
      subscriber: this.sub ? { ...this.sub } : null,
    };
  }

  restore(state: State): void {
    this.messages.clear();
    this.threads.clear();
    for (const m of state.messages) this.messages.set(m.messageId, m);
    this.queue = [...state.queue];
    this.replies = state.replies.map((r) => ({ ...r, handed: r.handed ?? false }));
    for (const t of state.threads) this.threads.set(t.chatId, t);
    this.sub = state.subscriber;
  }

  private settle(id: string, state: MessageState, at: number, also?: (m: MutablePhoneMessage) => void): void {
    const m = this.messages.get(id);
    if (!m || m.state !== 'queued') return;
    m.state = state;
    m.stateAt = at;
    also?.(m);
    const i = this.queue.indexOf(id);
    if (i >= 0) this.queue.splice(i, 1);
    const t = this.threads.get(m.chatId);
    if (t) t.lastActivity = Math.max(t.lastActivity, at);
    // Out of the queue and no longer shown in its thread: nothing reads it any more.
    if (!t || !t.entries.some((x) => x.kind === 'message' && x.id === id)) this.messages.delete(id);
  }

  /**
   * Content sealed under destroyed keys is emptied where it is held; a message still queued under one
   * leaves the queue (cancelled: there is nothing left to deliver).
   */
  private forgetKeys(keys: Set<string>, at: number): void {
    for (const m of [...this.messages.values()]) {
      if (!m.sealedWith || !keys.has(m.sealedWith)) continue;
      Object.assign(m, forgottenPersonal('phone.message_posted', {}));
      if (m.state === 'queued') this.settle(m.messageId, 'cancelled', at);
    }
    for (const r of this.replies) if (r.sealedWith && keys.has(r.sealedWith)) Object.assign(r, forgottenPersonal('phone.reply_received', {}));
    for (const t of this.threads.values())
      if (t.titleKey && keys.has(t.titleKey)) {
        t.title = null;
        delete t.titleKey;
      }
  }

  private thread(chatId: string, at: number): MutableThread {
    let t = this.threads.get(chatId);
    if (!t) {
      t = { chatId, entries: [], messages: 0, replies: 0, lastActivity: at, title: null };
      this.threads.set(chatId, t);
      if (this.threads.size > THREADS_KEPT) this.evictThread();
    }
    t.lastActivity = Math.max(t.lastActivity, at);
    return t;
  }

  private addEntry(t: MutableThread, entry: MutableThreadEntry): void {
    t.entries.push(entry);
    while (t.entries.length > THREAD_ENTRIES_KEPT) this.forget(t.entries.shift()!);
  }

  /** The quietest thread leaves the read model (its queued messages stay queued). */
  private evictThread(): void {
    let oldest: MutableThread | undefined;
    for (const t of this.threads.values()) if (!oldest || t.lastActivity < oldest.lastActivity) oldest = t;
    if (!oldest) return;
    this.threads.delete(oldest.chatId);
    for (const entry of oldest.entries) this.forget(entry);
  }

  private forget(entry: MutableThreadEntry): void {
    if (entry.kind !== 'message') return;
    const m = this.messages.get(entry.id);
    if (m && m.state !== 'queued') this.messages.delete(entry.id);
  }
}
