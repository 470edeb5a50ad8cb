import { randomUUID } from 'node:crypto';
import { contentOf, printable, type Frame } from './frames';
import type { PhoneSim } from './phone-sim';

/*
 * The app's flows beside Device Control, frame by frame as the app sends and reads them (paths under
 * app/src/main/kotlin/com/hermesandroid/relay/ of the reference checkout; docs/COMPATIBILITY.md, "The simulator's
 * app mode"): the notification listener, Threads (subscribe, receive, reply), a terminal tab, the clipboard.
 * Voice is phone-voice.ts. What the phone shows is said through `out`; nothing here keeps more than a bounded tail.
 */

/** Where the flows say what arrives: `line` a line of the simulator's log, `raw` shell output as it came. */
export type FlowsOut = {
  line(text: string): void;
  raw(text: string): void;
  /** Bytes written but not yet taken by the reader (stdout's `writableLength`): shell output is dropped past a bound. */
  backlog(): number;
};

/** A `phone.message` as ProactiveMessageHandler.kt:139-152 `parse` keeps it. */
export type ThreadMessage = { messageId: string | null; chatId: string | null; title: string | null; text: string; arrivedWhileAway: boolean };

/** The package the simulated notifications come from (Google Messages, as on a stock phone). */
export const DEFAULT_NOTIFY_APP = 'com.google.android.apps.messaging';

/** How a hand-over's Threads message begins (libs/domain hand-over.ts handOverThreadText): the user's cue. */
const HAND_OVER_OPENING = 'The agent asks you to take over: ';

/** How many received Thread messages the phone keeps (the newest; `reply` answers the last). */
const KEEP_MESSAGES = 50;
/** Shell output is dropped, and the drop said once, while the reader holds more than this unread. */
const MAX_UNREAD_OUTPUT = 1024 * 1024;
/** How long the phone waits for the relay's answer to a subscribe, a reply or an attach. */
const ANSWER_TIMEOUT_MS = 15_000;

type Waiter = { channel: string; match: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (err: Error) => void; timer: NodeJS.Timeout };

export class PhoneFlows {
  /** Received Thread messages, oldest first, at most KEEP_MESSAGES. */
  readonly messages: ThreadMessage[] = [];
  subscribed = false;
  /** The user's answer to a hand-over's Threads message (`--reply-to-handover`); null: left unanswered. */
  handOverReply: string | null = null;
  /** The open terminal tab, if any. */
  shell: { sessionName: string; pid: number | null } | null = null;
  private notified = 0;
  private dropped = 0;
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly sim: PhoneSim,
    private readonly out: FlowsOut,
    private readonly now: () => number = Date.now,
  ) {
    sim.listen('proactive', (f) => this.onProactive(f));
    sim.listen('terminal', (f) => this.onTerminal(f));
    sim.listen('notifications', (f) => this.settle(f));
    // A refusal of a whole channel (`grant_required`, Threads off) ends what waits on that channel.
    sim.listen('system', (f) => f.type === 'error' && this.refuse(contentOf(f.payload.channel), contentOf(f.payload.message) ?? 'refused'));
    void sim.closed.then((code) => {
      for (const w of [...this.waiters]) this.finish(w, new Error(`the relay closed the connection (${code})`));
    });
  }

  // ── Notifications ────────────────────────────────────────────────────

  /**
   * A notification the phone shows, forwarded as the app's listener does (notifications/HermesNotificationCompanion.kt:
   * 85-127, 139-160, 185-194): `notification.posted` with the NotificationEntry fields (NotificationModels.kt:22-32),
   * nulls included (its Json encodes defaults); none with neither title nor text (toEntry skips those, :149).
   */
  notify(title: string | null, text: string | null, packageName = DEFAULT_NOTIFY_APP): void {
    if (!title?.trim() && !text?.trim()) throw new Error('a notification needs a title or a text (the app forwards none without)');
    this.notified++;
    this.sim.send('notifications', 'notification.posted', {
      package_name: packageName,
      title: title?.trim() || null,
      text: text?.trim() || null,
      sub_text: null,
      posted_at: this.now(),
      // StatusBarNotification.getKey(): user|package|id|tag|uid.
      key: `0|${packageName}|${this.notified}|null|10${String(this.notified).padStart(3, '0')}`,
    });
  }

  // ── Threads ──────────────────────────────────────────────────────────

  /**
   * "Let Hermes message me" on: `proactive.subscribe` with an empty payload after auth.ok (ConnectionViewModel.kt:
   * 2582-2584, 3591-3601). Resolves with the backlog's count once `proactive.backlog.complete` arrived.
   */
  async subscribe(): Promise<number> {
    const done = this.waitFor('proactive', (f) => f.type === 'proactive.backlog.complete');
    this.sim.send('proactive', 'proactive.subscribe', {});
    const f = await done;
    this.subscribed = true;
    return Number(contentOf(f.payload.count) ?? 0) || 0;
  }

  /** The toggle off: `proactive.unsubscribe` (ConnectionViewModel.kt:2586-2588). */
  unsubscribe(): void {
    this.sim.send('proactive', 'proactive.unsubscribe', {});
    this.subscribed = false;
  }

  /**
   * A reply from the Thread's composer (ConnectionViewModel.kt:2619-2645): the text trimmed, the message's `chat_id`
   * and `reply_to` (its id), a `message_id` the app mints to settle its bubble, `ts` in ms. Resolves on the relay's
   * `proactive.reply.ack` for that id (ProactiveMessageHandler.kt:93-97).
   */
  async reply(text: string, to: { chatId: string | null; replyTo: string | null } | null = this.latest()): Promise<{ replyId: string }> {
    const body = text.trim();
    if (!body) throw new Error('a reply needs text');
    if (!to) throw new Error('no Thread message to reply to yet (subscribe with --threads, or name one with --chat)');
    const messageId = randomUUID();
    const ack = this.waitFor('proactive', (f) => f.type === 'proactive.reply.ack' && f.payload.client_msg_id === messageId);
    this.sim.send('proactive', 'proactive.reply', {
      text: body,
      ...(to.chatId ? { chat_id: to.chatId } : {}),
      ...(to.replyTo ? { reply_to: to.replyTo } : {}),
      message_id: messageId,
      ts: this.now(),
    });
    const f = await ack;
    return { replyId: contentOf(f.payload.reply_id) ?? messageId };
  }

  latest(): { chatId: string | null; replyTo: string | null } | null {
    const m = this.messages[this.messages.length - 1];
    return m ? { chatId: m.chatId, replyTo: m.messageId } : null;
  }

  /** ProactiveMessageHandler.kt:75-99: phone.message kept (a blank text dropped), the markers read, the rest ignored. */
  private onProactive(f: Frame): void {
    const p = f.payload;
    if (f.type === 'phone.message') {
      const text = contentOf(p.text);
      if (!text?.trim()) return this.out.line('dropped a phone.message without text (as the app does)');
      const m: ThreadMessage = {
        messageId: contentOf(p.message_id),
        chatId: contentOf(p.chat_id),
        title: contentOf(p.title),
        text,
        arrivedWhileAway: p.queued_delivery === true,
      };
      this.messages.push(m);
      if (this.messages.length > KEEP_MESSAGES) this.messages.shift();
      const from = `${m.chatId ?? '?'}${m.title ? ` · ${m.title}` : ''}${m.arrivedWhileAway ? ' (arrived while away)' : ''}`;
      this.out.line(printable(`thread ${from}: ${text}`));
      // Answered from the notification's reply box, which sets reply_to (ProactiveReplyReceiver.kt:57,90).
      if (this.handOverReply !== null && text.startsWith(HAND_OVER_OPENING))
        this.reply(this.handOverReply, { chatId: m.chatId, replyTo: m.messageId }).then(
          (r) => this.out.line(`hand-over answered (${r.replyId})`),
          (err: Error) => this.out.line(`hand-over answer failed: ${err.message}`),
        );
    } else if (f.type === 'proactive.backlog.complete') {
      this.out.line(printable(`threads: subscribed; ${contentOf(p.count) ?? '0'} queued message(s) delivered`));
    } else if (f.type === 'proactive.unsubscribed') {
      this.subscribed = false;
      this.out.line(printable(`threads: unsubscribed (${contentOf(p.reason) ?? '?'})`));
    } else if (f.type === 'proactive.error') {
      this.out.line(printable(`threads: relay refused (${contentOf(p.code) ?? '?'}): ${contentOf(p.message) ?? contentOf(p.error) ?? ''}`));
      this.refuse('proactive', `relay refused: ${contentOf(p.code) ?? '?'}`);
    }
    this.settle(f);
  }

  // ── Terminal ─────────────────────────────────────────────────────────

  /** TerminalViewModel.kt:309-310: a tab's session is `<brand>-<device id>-tab<n>` (`svc` here, `hermes` there). */
  sessionName(tab = 1): string {
    let id = '';
    for (const c of this.sim.deviceId.slice(0, 48)) id += /[A-Za-z0-9._-]/.test(c) ? c : '-';
    return `svc-${id}-tab${tab}`;
  }

  /** sendAttach (TerminalViewModel.kt:608-615): `terminal.attach {session_name, cols, rows}`; resolves on `terminal.attached`. */
  async attach(cols = 80, rows = 24): Promise<{ pid: number | null; shell: string | null }> {
    const sessionName = this.sessionName();
    const attached = this.waitFor('terminal', (f) => f.type === 'terminal.attached' && f.payload.session_name === sessionName);
    this.sim.send('terminal', 'terminal.attach', { session_name: sessionName, cols, rows });
    const f = await attached;
    const pid = Number.isInteger(f.payload.pid) ? (f.payload.pid as number) : null;
    this.shell = { sessionName, pid };
    return { pid, shell: contentOf(f.payload.shell) };
  }

  /** sendInput (TerminalViewModel.kt:529-532): `terminal.input {session_name, data}`. */
  input(data: string): void {
    if (this.shell) this.sim.send('terminal', 'terminal.input', { session_name: this.shell.sessionName, data });
  }

  /** resize (TerminalViewModel.kt:565-577): `terminal.resize {session_name, cols, rows}` while attached. */
  resize(cols: number, rows: number): void {
    if (this.shell) this.sim.send('terminal', 'terminal.resize', { session_name: this.shell.sessionName, cols, rows });
  }

  /** closeTab (TerminalViewModel.kt:351-358, detach) or killTab (:376-384, kill); resolves with `terminal.detached`'s reason. */
  async leave(how: 'detach' | 'kill'): Promise<string> {
    if (!this.shell) return 'not attached';
    const sessionName = this.shell.sessionName;
    const gone = this.waitFor('terminal', (f) => f.type === 'terminal.detached' && f.payload.session_name === sessionName);
    this.sim.send('terminal', `terminal.${how}`, { session_name: sessionName });
    return contentOf((await gone).payload.reason) ?? 'detached';
  }

  /** Resolves with the reason once the open tab's shell is detached or gone, whoever ended it. */
  detached(): Promise<Frame> {
    const name = this.shell?.sessionName;
    return this.waitFor('terminal', (f) => f.type === 'terminal.detached' && f.payload.session_name === name, 0);
  }

  /** handleEnvelope (TerminalViewModel.kt:624-723), routed by `session_name`. */
  private onTerminal(f: Frame): void {
    const p = f.payload;
    const mine = this.shell !== null && p.session_name === this.shell.sessionName;
    if (f.type === 'terminal.output' && mine && typeof p.data === 'string') this.output(p.data);
    else if (f.type === 'terminal.detached' && mine) {
      const code = contentOf(p.exit_code);
      this.out.line(printable(`shell detached: ${contentOf(p.reason) ?? 'detached'}${code !== null ? ` (exit code ${code})` : ''}`));
      this.shell = null;
    } else if (f.type === 'terminal.error') {
      this.out.line(printable(`terminal error: ${contentOf(p.message) ?? 'Unknown error'}`));
      this.refuse('terminal', contentOf(p.message) ?? 'terminal error');
    }
    this.settle(f);
  }

  /** Shell output straight through (it is a terminal's), dropped while the reader lags so nothing piles up here. */
  private output(data: string): void {
    if (this.out.backlog() > MAX_UNREAD_OUTPUT) {
      this.dropped += data.length;
      return;
    }
    if (this.dropped > 0) {
      this.out.line(`(${this.dropped} characters of shell output dropped: the output was not being read)`);
      this.dropped = 0;
    }
    this.out.raw(data);
  }

  // ── Clipboard ────────────────────────────────────────────────────────

  /**
   * The user copies text on the phone. The app moves its clipboard only through Device Control (`GET`/`POST
   * /clipboard`, accessibility/ActionExecutor.kt:864-930; BridgeCapabilities.kt:61-62 `clipboard_read`/`_write`):
   * the host reads this with `GET /clipboard`. The app never calls `/clipboard/inbox` (the desktop CLI does).
   */
  copy(text: string): void {
    this.sim.state.clipboard = text;
  }

  clipboard(): string {
    return this.sim.state.clipboard;
  }

  // ── Waiting for the relay's answer ───────────────────────────────────

  /** The next frame that `match`es; 0 waits as long as the socket lives. */
  private waitFor(channel: string, match: (f: Frame) => boolean, timeoutMs = ANSWER_TIMEOUT_MS): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const w: Waiter = { channel, match, resolve, reject, timer: undefined as unknown as NodeJS.Timeout };
      if (timeoutMs > 0) w.timer = setTimeout(() => this.finish(w, new Error(`no answer from the relay within ${timeoutMs / 1000} s`)), timeoutMs);
      this.waiters.add(w);
    });
  }

  private settle(f: Frame): void {
    for (const w of [...this.waiters]) if (w.channel === f.channel && w.match(f)) this.finish(w, f);
  }

  private refuse(channel: string | null, why: string): void {
    for (const w of [...this.waiters]) if (w.channel === channel) this.finish(w, new Error(why));
  }

  private finish(w: Waiter, result: Frame | Error): void {
    clearTimeout(w.timer);
    this.waiters.delete(w);
    if (result instanceof Error) w.reject(result);
    else w.resolve(result);
  }
}
