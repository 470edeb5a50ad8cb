import { createHash } from 'node:crypto';
import { makePng } from './png';
import { SimScreens } from './sim-screens';

/** How the simulated user answers a destructive-verb confirmation: the relay's question, or the app's own modal. */
export type ConfirmPolicy = 'allow' | 'deny' | 'ignore';

export type ScreenNode = {
  nodeId: string;
  text: string | null;
  contentDescription: string | null;
  className: string;
  viewId: string | null;
  bounds: { left: number; top: number; right: number; bottom: number };
  clickable: boolean;
  longClickable: boolean;
  scrollable: boolean;
  editable: boolean;
  focused: boolean;
  selected: boolean;
  enabled: boolean;
};

export type PhoneState = {
  masterEnabled: boolean;
  deviceControlSupported: boolean;
  currentApp: string;
  trustedVerbs: string[];
  autoDisableMinutes: number | null;
  clipboard: string;
  eventsStreaming: boolean;
  screenOn: boolean;
  battery: number;
  focusedText: string;
};

/** What the phone starts as (the rest starts the same on every simulated phone). */
export type PhoneSetup = Partial<
  Pick<PhoneState, 'masterEnabled' | 'deviceControlSupported' | 'currentApp' | 'trustedVerbs' | 'autoDisableMinutes'>
> & {
  /**
   * The screen in pixels, and its screenshots full size at it, as a real phone's (a 1440x3120 PNG costs the
   * simulator some 100 ms to make). Without it: a 1080x2340 screen whose screenshot is a 54x96 thumbnail, cheap
   * enough for suites that bound a command to a few hundred ms.
   */
  screen?: { width: number; height: number };
  /**
   * `apps`: a launcher, a messaging app and settings that taps and typing navigate and change (sim-screens.ts).
   * `fixed` (the default): one Messages screen that nothing changes, as the older suites expect.
   */
  ui?: 'fixed' | 'apps';
  /** `apps`: how long a sent message says `Sending…` before `Delivered` (default 1500 ms, by the phone's clock). */
  deliveryMs?: number;
};

/** An accessibility event a command caused, as `/events` lists it. */
export type AccessibilityEvent = { seq: number; type: string; package: string; text: string | null; ts: number };

export const APPS = [
  { package: 'com.android.launcher3', label: 'Home' },
  { package: 'com.android.chrome', label: 'Chrome' },
  { package: 'com.google.android.gm', label: 'Gmail' },
  { package: 'com.google.android.apps.messaging', label: 'Messages' },
  { package: 'com.android.settings', label: 'Settings' },
  { package: 'com.spotify.music', label: 'Spotify' },
  { package: 'com.chase.sig.android', label: 'Chase' },
];

export const CONTACTS = [
  { name: 'Ada Lovelace', phone: '+44 20 7946 0018' },
  { name: 'Alan Turing', phone: '+44 20 7946 0019' },
  { name: 'Grace Hopper', phone: '+1 202 555 0142' },
];

/**
 * The simulated phone itself, whichever way it answers: its switches, foreground app, clipboard, a fixed
 * Messages screen, and the accessibility events the commands cause (the newest 200). `onForeground` is
 * called when another app comes to the front (the phone then reports its status).
 */
export class FakePhone {
  readonly state: PhoneState;
  readonly events: AccessibilityEvent[] = [];
  readonly screenSize: { width: number; height: number };
  /** The screenshot's size: the screen's when `screen` was given. */
  readonly shotSize: { width: number; height: number };
  /** The screens taps change (`ui: 'apps'`), else null. */
  readonly apps: SimScreens | null;
  private seq = 0;
  private shot: { seq: number; png: Buffer } | null = null;

  constructor(
    setup: PhoneSetup,
    private readonly onForeground: (pkg: string) => void,
    /** The phone's own clock (epoch ms): its event times, and in app mode its idle expiry. */
    readonly now: () => number = Date.now,
  ) {
    this.screenSize = setup.screen ?? { width: 1080, height: 2340 };
    this.shotSize = setup.screen ?? { width: 54, height: 96 };
    this.state = {
      masterEnabled: setup.masterEnabled ?? true,
      deviceControlSupported: setup.deviceControlSupported ?? true,
      currentApp: setup.currentApp ?? 'com.android.launcher3',
      trustedVerbs: setup.trustedVerbs ?? [],
      autoDisableMinutes: setup.autoDisableMinutes === undefined ? null : setup.autoDisableMinutes,
      clipboard: '',
      eventsStreaming: false,
      screenOn: true,
      battery: 87,
      focusedText: '',
    };
    this.apps =
      setup.ui === 'apps'
        ? new SimScreens(
            {
              size: this.screenSize,
              now: () => this.now(),
              currentApp: () => this.state.currentApp,
              open: (pkg) => this.setForeground(pkg),
              event: (type, text) => this.event(type, text),
            },
            setup.deliveryMs,
          )
        : null;
  }

  /** A tap the app dispatched at (x, y) in phone pixels: on the `apps` screens it lands on a view. */
  tapAt(x: number, y: number): void {
    this.apps?.tapAt(x, y);
  }

  /** Text the app set on the focused field. */
  typed(text: string): void {
    this.apps?.typed(text);
  }

  /** A global key the app pressed. */
  pressKey(key: string): void {
    if (key === 'back') this.apps?.back();
  }

  /** The seq of the newest event (0 before any). */
  get eventSeq(): number {
    return this.seq;
  }

  setForeground(pkg: string): void {
    if (this.state.currentApp === pkg) return;
    this.event('window_state_changed', null, pkg);
    this.onForeground(pkg);
  }

  event(type: string, text: string | null, pkg = this.state.currentApp): void {
    this.events.push({ seq: ++this.seq, type, package: pkg, text, ts: this.now() / 1000 });
    if (this.events.length > 200) this.events.shift();
  }

  screenNodes(): ScreenNode[] {
    if (this.apps) return this.apps.nodes();
    const n = (nodeId: string, text: string | null, className: string, top: number, extra: Partial<ScreenNode> = {}): ScreenNode => ({
      nodeId,
      text,
      contentDescription: null,
      className,
      viewId: null,
      bounds: { left: 0, top, right: 1080, bottom: top + 120 },
      clickable: false,
      longClickable: false,
      scrollable: false,
      editable: false,
      focused: false,
      selected: false,
      enabled: true,
      ...extra,
    });
    return [
      n('0', null, 'android.widget.FrameLayout', 0, { bounds: { left: 0, top: 0, right: 1080, bottom: 2340 } }),
      n('1', 'Messages', 'android.widget.TextView', 80, { viewId: 'app:id/title' }),
      n('2', null, 'android.widget.EditText', 300, {
        viewId: 'app:id/compose',
        editable: true,
        focused: true,
        clickable: true,
        contentDescription: 'Message',
      }),
      n('3', 'Send', 'android.widget.Button', 440, { viewId: 'app:id/send', clickable: true }),
      n('4', 'Settings', 'android.widget.Button', 580, { clickable: true }),
      n('5', null, 'androidx.recyclerview.widget.RecyclerView', 720, { scrollable: true, bounds: { left: 0, top: 720, right: 1080, bottom: 2200 } }),
    ];
  }

  screen(includeBounds = true): Record<string, unknown> {
    const nodes = this.screenNodes().map((x) => (includeBounds ? x : { ...x, bounds: undefined }));
    return {
      packageName: this.state.currentApp,
      rootBounds: { left: 0, top: 0, right: this.screenSize.width, bottom: this.screenSize.height },
      nodes,
      truncated: false,
      nodeCount: nodes.length,
    };
  }

  /**
   * A screenshot of the screen as it is (`shotSize`): a new image after each event, and the same screen made
   * once (a full-size PNG costs tens of ms).
   */
  screenshot(): Buffer {
    if (this.shot?.seq !== this.seq) this.shot = { seq: this.seq, png: makePng(this.shotSize.width, this.shotSize.height, this.seq) };
    return this.shot.png;
  }

  screenHash(): string {
    return createHash('sha256')
      .update(JSON.stringify(this.screen(true)))
      .digest('hex');
  }
}
