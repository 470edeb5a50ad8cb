import type { ScreenNode } from './fake-phone';

/*
 * A plausible phone's screens for agents to drive (issue 40, item 2), served when a simulated phone is set up
 * with `ui: 'apps'`: a launcher, a messaging app (a conversation list, a thread with a compose field and a Send
 * button), a settings screen with switches, and a title screen for any other app. Each is a view tree as
 * Android lays it out: nested layouts, nodes with neither text nor action (the phone leaves them out of
 * `/screen`), repeated texts, rows below the screen's edge, and a message status that changes after a delay
 * (`Sending…`, then `Delivered`, by the phone's own clock). Taps land on the view under the point (the nearest
 * clickable ancestor takes them, as Android dispatches a touch), so a tap by node, by text or by coordinates
 * navigates or toggles, and typing fills the focused field. Flattened in pre-order to the node fields of the
 * app's ScreenReader (ScreenNode, fake-phone.ts; ScreenReader.kt:105-135 in the reference app).
 */

type View = {
  cls: string;
  text?: string | null;
  desc?: string | null;
  id?: string | null;
  b: [number, number, number, number];
  click?: boolean;
  longClick?: boolean;
  scroll?: boolean;
  edit?: boolean;
  focused?: boolean;
  enabled?: boolean;
  onTap?: () => void;
  children?: View[];
};

type Message = { text: string; mine: boolean; sentAt: number };

const MESSAGING = 'com.google.android.apps.messaging';
const SETTINGS = 'com.android.settings';
const LAUNCHER = 'com.android.launcher3';
const W = 'android.widget.';

/** What the screens need of their phone: its size, clock, foreground app and events. */
export type ScreenHost = {
  size: { width: number; height: number };
  now: () => number;
  currentApp: () => string;
  open: (pkg: string) => void;
  event: (type: string, text: string | null) => void;
};

export class SimScreens {
  /** The conversation open in the messaging app (null: the list). */
  thread: string | null = null;
  draft = '';
  fieldFocused = false;
  wifi = true;
  airplane = false;
  readonly threads = new Map<string, Message[]>([
    ['Ada Lovelace', [{ text: 'See you at 6', mine: false, sentAt: 0 }]],
    ['Alan Turing', [{ text: 'OK', mine: false, sentAt: 0 }]],
    ['Grace Hopper', [{ text: 'OK', mine: true, sentAt: 0 }]],
    ['Charles Babbage', [{ text: 'The engine is ready', mine: false, sentAt: 0 }]],
    ['Mum', [{ text: 'Call me when you can', mine: false, sentAt: 0 }]],
    ['Bank Alerts', [{ text: 'Your statement is ready', mine: false, sentAt: 0 }]],
    ['Dentist', [{ text: 'Your appointment is on Friday', mine: false, sentAt: 0 }]],
    ['Pharmacy', [{ text: 'Your prescription is ready', mine: false, sentAt: 0 }]],
    ['Book club', [{ text: 'OK', mine: false, sentAt: 0 }]],
    ['Neighbours', [{ text: 'Parcel at no. 12', mine: false, sentAt: 0 }]],
  ]);

  constructor(
    private readonly host: ScreenHost,
    /** How long a sent message says `Sending…` before `Delivered`. */
    readonly deliveryMs = 1500,
  ) {}

  /** The screen as a flat pre-order list of every view (the app's walk then keeps the interesting ones). */
  nodes(): ScreenNode[] {
    const out: ScreenNode[] = [];
    const visit = (v: View) => {
      out.push({
        nodeId: String(out.length),
        text: v.text ?? null,
        contentDescription: v.desc ?? null,
        className: v.cls,
        viewId: v.id ? `${this.pkg()}:id/${v.id}` : null,
        bounds: { left: v.b[0], top: v.b[1], right: v.b[2], bottom: v.b[3] },
        clickable: v.click ?? false,
        longClickable: v.longClick ?? false,
        scrollable: v.scroll ?? false,
        editable: v.edit ?? false,
        focused: v.focused ?? false,
        selected: false,
        enabled: v.enabled ?? true,
      });
      v.children?.forEach(visit);
    };
    visit(this.root());
    return out;
  }

  /** A touch at (x, y): the deepest view under it, then up to the first clickable one, which acts. */
  tapAt(x: number, y: number): void {
    const path: View[] = [];
    const hit = (v: View): boolean => {
      const [l, t, r, b] = v.b;
      if (x < l || x >= r || y < t || y >= b) return false;
      path.push(v);
      for (const c of [...(v.children ?? [])].reverse()) if (hit(c)) return true;
      return true;
    };
    hit(this.root());
    const target = [...path].reverse().find((v) => v.click && v.enabled !== false);
    if (!target) return;
    this.host.event('view_clicked', target.text ?? target.desc ?? null);
    if (target.edit) this.fieldFocused = true;
    target.onTap?.();
  }

  /** ACTION_SET_TEXT on the focused field (else the first editable one, as the app's findFocusedInput falls back). */
  typed(text: string): void {
    if (this.pkg() === MESSAGING && this.thread) this.draft = text;
  }

  back(): void {
    if (this.pkg() === MESSAGING && this.thread) this.closeThread();
    else this.host.open(LAUNCHER);
  }

  /** Someone writes: the thread's newest message (the list shows it as the row's snippet). */
  receive(from: string, text: string): void {
    this.threads.set(from, [...(this.threads.get(from) ?? []), { text, mine: false, sentAt: this.host.now() }]);
  }

  private closeThread(): void {
    this.thread = null;
    this.draft = '';
    this.fieldFocused = false;
  }

  private pkg(): string {
    return this.host.currentApp();
  }

  private root(): View {
    const { width: w, height: h } = this.host.size;
    const screen = (children: View[]): View => ({ cls: `${W}FrameLayout`, id: 'content', b: [0, 0, w, h], children });
    switch (this.pkg()) {
      case LAUNCHER:
        return screen(this.launcher(w, h));
      case MESSAGING:
        return screen(this.thread ? this.threadView(w, h, this.thread) : this.list(w, h));
      case SETTINGS:
        return screen(this.settings(w, h));
      default:
        return screen([{ cls: `${W}TextView`, id: 'title', text: this.pkg().split('.').pop() ?? this.pkg(), b: [40, 80, w - 40, 200] }]);
    }
  }

  private launcher(w: number, h: number): View[] {
    const icon = (label: string, pkg: string, col: number, row: number, page = 0): View => {
      const left = page * w + 40 + col * 250;
      const top = 500 + row * 300;
      return {
        cls: `${W}TextView`,
        id: 'icon',
        text: label,
        click: true,
        longClick: true,
        b: [left, top, left + 220, top + 260],
        onTap: () => this.host.open(pkg),
      };
    };
    return [
      { cls: `${W}TextView`, id: 'date', text: 'Tuesday, 3 June', b: [40, 120, w - 40, 200] },
      { cls: `${W}FrameLayout`, id: 'search_container', desc: 'Search', click: true, b: [40, 260, w - 40, 380] },
      {
        cls: `${W}FrameLayout`,
        id: 'workspace',
        b: [0, 450, w, 1400],
        children: [
          icon('Messages', MESSAGING, 0, 0),
          icon('Settings', SETTINGS, 1, 0),
          icon('Chrome', 'com.android.chrome', 2, 0),
          icon('Gmail', 'com.google.android.gm', 3, 0),
          // The workspace's second page: laid out beyond the screen's right edge.
          icon('Spotify', 'com.spotify.music', 0, 0, 1),
        ],
      },
      {
        cls: `${W}LinearLayout`,
        id: 'hotseat',
        b: [0, h - 320, w, h - 80],
        children: [
          { cls: `${W}ImageView`, desc: 'Phone', click: true, b: [60, h - 300, 260, h - 100] },
          { cls: `${W}ImageView`, desc: 'Messages', click: true, b: [300, h - 300, 500, h - 100], onTap: () => this.host.open(MESSAGING) },
          { cls: `${W}ImageView`, desc: 'Camera', click: true, b: [540, h - 300, 740, h - 100] },
        ],
      },
    ];
  }

  private toolbar(w: number, title: string, lead: View | null, actions: View[]): View {
    return {
      cls: `${W}LinearLayout`,
      id: 'toolbar',
      b: [0, 0, w, 200],
      children: [...(lead ? [lead] : []), { cls: `${W}TextView`, id: 'toolbar_title', text: title, b: [160, 60, w - 400, 140] }, ...actions],
    };
  }

  private list(w: number, h: number): View[] {
    const rowH = 260;
    const rows = [...this.threads].map(([name, msgs], i): View => {
      const top = 200 + i * rowH;
      const last = msgs[msgs.length - 1];
      return {
        cls: `${W}LinearLayout`,
        id: 'conversation_row',
        click: true,
        longClick: true,
        b: [0, top, w, top + rowH],
        onTap: () => {
          this.thread = name;
          this.fieldFocused = false;
        },
        children: [
          // The avatar: an image with no description, so the phone leaves it out.
          { cls: `${W}ImageView`, id: 'avatar', b: [40, top + 40, 200, top + 200] },
          { cls: `${W}TextView`, id: 'conversation_name', text: name, b: [240, top + 40, w - 40, top + 120] },
          {
            cls: `${W}TextView`,
            id: 'conversation_snippet',
            text: last ? (last.mine ? `You: ${last.text}` : last.text) : null,
            b: [240, top + 140, w - 40, top + 220],
          },
        ],
      };
    });
    return [
      this.toolbar(w, 'Messages', null, [
        { cls: `${W}ImageButton`, id: 'action_search', desc: 'Search', click: true, b: [w - 360, 40, w - 220, 160] },
        { cls: `${W}ImageButton`, desc: 'More options', click: true, b: [w - 200, 40, w - 60, 160] },
      ]),
      // Rows past the list's bottom edge are laid out below the screen (off screen until scrolled).
      { cls: 'androidx.recyclerview.widget.RecyclerView', id: 'conversation_list', scroll: true, b: [0, 200, w, h - 200], children: rows },
      {
        cls: 'com.google.android.material.floatingactionbutton.ExtendedFloatingActionButton',
        id: 'start_chat',
        text: 'Start chat',
        click: true,
        b: [w - 520, h - 360, w - 40, h - 220],
      },
    ];
  }

  private threadView(w: number, h: number, name: string): View[] {
    const msgs = this.threads.get(name) ?? [];
    const now = this.host.now();
    const bubbles: View[] = [];
    msgs.forEach((m, i) => {
      const top = 240 + i * 200;
      bubbles.push({
        cls: `${W}TextView`,
        id: 'message_text',
        text: m.text,
        longClick: true,
        b: [m.mine ? 300 : 40, top, m.mine ? w - 40 : w - 300, top + 140],
      });
      if (m.mine && m.sentAt > 0 && i === msgs.length - 1)
        bubbles.push({
          cls: `${W}TextView`,
          id: 'message_status',
          text: now - m.sentAt < this.deliveryMs ? 'Sending…' : 'Delivered',
          b: [w - 400, top + 145, w - 40, top + 195],
        });
    });
    const send = () => {
      if (!this.draft) return;
      this.threads.set(name, [...msgs, { text: this.draft, mine: true, sentAt: this.host.now() }]);
      this.draft = '';
    };
    return [
      this.toolbar(
        w,
        name,
        { cls: `${W}ImageButton`, id: 'back', desc: 'Navigate up', click: true, b: [20, 40, 140, 160], onTap: () => this.closeThread() },
        [{ cls: `${W}ImageButton`, id: 'action_call', desc: 'Call', click: true, b: [w - 200, 40, w - 60, 160] }],
      ),
      { cls: 'androidx.recyclerview.widget.RecyclerView', id: 'message_list', scroll: true, b: [0, 200, w, h - 420], children: bubbles },
      {
        cls: `${W}LinearLayout`,
        id: 'compose_bar',
        b: [0, h - 400, w, h - 200],
        children: [
          {
            cls: `${W}EditText`,
            id: 'compose_message_text',
            desc: 'Text message',
            text: this.draft || null,
            edit: true,
            click: true,
            focused: this.fieldFocused,
            b: [40, h - 380, w - 300, h - 220],
          },
          {
            cls: `${W}Button`,
            id: 'send_message_button',
            text: 'Send',
            desc: 'Send SMS',
            click: true,
            enabled: this.draft !== '',
            b: [w - 260, h - 380, w - 40, h - 220],
            onTap: send,
          },
        ],
      },
    ];
  }

  private settings(w: number, h: number): View[] {
    const row = (i: number, title: string, summary: string, sw?: { flip: () => void }): View => {
      const top = 260 + i * 240;
      const children: View[] = sw
        ? [{ cls: `${W}Switch`, id: 'switch_widget', text: title, click: true, b: [40, top + 20, w - 40, top + 120], onTap: sw.flip }]
        : [{ cls: `${W}TextView`, id: 'title', text: title, b: [40, top + 20, w - 40, top + 120] }];
      children.push({ cls: `${W}TextView`, id: 'summary', text: summary, b: [40, top + 130, w - 40, top + 220] });
      return { cls: `${W}LinearLayout`, id: 'preference', click: !sw, b: [0, top, w, top + 240], children };
    };
    return [
      { cls: `${W}TextView`, id: 'title', text: 'Settings', b: [40, 80, w - 40, 200] },
      {
        cls: 'androidx.recyclerview.widget.RecyclerView',
        id: 'recycler_view',
        scroll: true,
        b: [0, 240, w, h],
        children: [
          row(0, 'Wi-Fi', this.wifi ? 'Connected to HomeNet' : 'Off', { flip: () => (this.wifi = !this.wifi) }),
          row(1, 'Airplane mode', this.airplane ? 'On' : 'Off', { flip: () => (this.airplane = !this.airplane) }),
          row(2, 'Connected devices', 'Bluetooth, pairing'),
          row(3, 'Battery', '87%'),
          row(4, 'Storage', '41% used'),
          row(5, 'Notifications', 'Notification history, conversations'),
          row(6, 'Display', 'Dark theme, font size, brightness'),
          row(7, 'Security & privacy', 'Screen lock, Find My Device'),
          row(8, 'About phone', 'Pixel 8'),
          row(9, 'System', 'Languages, gestures, time, backup'),
        ],
      },
    ];
  }
}
