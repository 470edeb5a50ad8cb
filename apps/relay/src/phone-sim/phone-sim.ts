import { createHash, randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { makePng } from './png';

/**
 * A simulated sideload phone for the bridge: pairs (or reconnects with a token), reports
 * `bridge.status`, answers every Device Control command with plausible data, and answers destructive-
 * verb confirmations by policy. Used by the e2e tests, the benchmark, the console demo and
 * `svc phone-sim`.
 */
export type ConfirmPolicy = 'allow' | 'deny' | 'ignore';

export type SimCommand = { request_id: string; method: string; path: string; params: Record<string, unknown>; body: Record<string, unknown> };
export type SimAnswer = { status: number; result: unknown };
/** Return null to stay silent (the relay then times out). */
export type SimHandler = (cmd: SimCommand, sim: PhoneSim) => SimAnswer | null | Promise<SimAnswer | null>;

export type PhoneSimOptions = {
  /** `ws://host:port` (the `/ws` path is added), or a full `ws(s)://…/ws` URL, or the http origin. */
  relayUrl: string;
  code?: string;
  token?: string;
  confirm?: ConfirmPolicy;
  deviceName?: string;
  deviceId?: string;
  masterEnabled?: boolean;
  deviceControlSupported?: boolean;
  currentApp?: string;
  trustedVerbs?: string[];
  autoDisableMinutes?: number | null;
  /** Per-path overrides of the built-in answers. */
  handlers?: Record<string, SimHandler>;
  /** Where the simulator says what it receives (default: silent). */
  log?: (line: string) => void;
  /** Milliseconds before each answer (default 0). */
  answerDelayMs?: number;
  /** Upper bound on a real `/wait` sleep (default 15000). */
  maxWaitMs?: number;
};

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

const APPS = [
  { package: 'com.android.launcher3', label: 'Home' },
  { package: 'com.android.chrome', label: 'Chrome' },
  { package: 'com.google.android.gm', label: 'Gmail' },
  { package: 'com.google.android.apps.messaging', label: 'Messages' },
  { package: 'com.android.settings', label: 'Settings' },
  { package: 'com.spotify.music', label: 'Spotify' },
  { package: 'com.chase.sig.android', label: 'Chase' },
];

const CONTACTS = [
  { name: 'Ada Lovelace', phone: '+44 20 7946 0018' },
  { name: 'Alan Turing', phone: '+44 20 7946 0019' },
  { name: 'Grace Hopper', phone: '+1 202 555 0142' },
];

export class PhoneSim {
  ws: WebSocket | null = null;
  token: string | null = null;
  tokenPrefix: string | null = null;
  /** Every bridge frame the relay sent, in order. */
  readonly received: Array<{ type: string; payload: Record<string, unknown> }> = [];
  readonly state: {
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
  confirm: ConfirmPolicy;
  readonly handlers: Record<string, SimHandler>;
  private closedResolve!: (code: number) => void;
  readonly closed: Promise<number>;
  private readonly events: Array<{ seq: number; type: string; package: string; text: string | null; ts: number }> = [];
  private eventSeq = 0;

  constructor(readonly opts: PhoneSimOptions) {
    this.state = {
      masterEnabled: opts.masterEnabled ?? true,
      deviceControlSupported: opts.deviceControlSupported ?? true,
      currentApp: opts.currentApp ?? 'com.android.launcher3',
      trustedVerbs: opts.trustedVerbs ?? [],
      autoDisableMinutes: opts.autoDisableMinutes === undefined ? null : opts.autoDisableMinutes,
      clipboard: '',
      eventsStreaming: false,
      screenOn: true,
      battery: 87,
      focusedText: '',
    };
    this.confirm = opts.confirm ?? 'allow';
    this.handlers = { ...opts.handlers };
    this.closed = new Promise((r) => (this.closedResolve = r));
  }

  private say(line: string): void {
    this.opts.log?.(line);
  }

  /** Connects and authenticates; resolves once `system/auth.ok` arrived and the status was sent. */
  start(): Promise<this> {
    const url = wsUrl(this.opts.relayUrl);
    const ws = new WebSocket(url);
    this.ws = ws;
    return new Promise((resolve, reject) => {
      let authed = false;
      ws.once('open', () => {
        const auth: Record<string, unknown> = {
          device_name: this.opts.deviceName ?? 'Phone simulator',
          device_id: this.opts.deviceId ?? `phone-sim-${randomUUID().slice(0, 8)}`,
          device_model: 'svc phone-sim',
          device_platform: 'android',
          client_surface: 'phone-sim',
        };
        if (this.opts.token) auth.session_token = this.opts.token;
        else if (this.opts.code) auth.pairing_code = this.opts.code;
        else return reject(new Error('phone-sim needs a pairing code or a session token'));
        this.send('system', 'auth', auth, 'auth');
      });
      ws.on('message', (data) => {
        let f: { channel: string; type: string; id?: string; payload: Record<string, unknown> };
        try {
          f = JSON.parse(data.toString());
        } catch {
          return;
        }
        if (f.channel === 'system' && f.type === 'auth.ok') {
          authed = true;
          this.token = String(f.payload.session_token);
          this.tokenPrefix = this.token.slice(0, 8);
          this.say(`paired: token prefix ${this.tokenPrefix}`);
          this.reportStatus();
          resolve(this);
          return;
        }
        if (f.channel === 'system' && f.type === 'auth.fail') {
          reject(new Error(`auth failed: ${String(f.payload.reason)}`));
          return;
        }
        void this.onFrame(f);
      });
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', (err) => (authed ? this.say(`socket error: ${err.message}`) : reject(err)));
      ws.on('close', (code) => {
        this.say(`closed (${code})`);
        this.closedResolve(code);
        if (!authed) reject(new Error(`closed before auth (${code})`));
      });
    });
  }

  stop(): void {
    this.ws?.close();
  }

  send(channel: string, type: string, payload: Record<string, unknown>, id?: string): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ channel, type, id: id ?? randomUUID(), payload }));
  }

  /** Sends `bridge.status`, after applying a change to the simulated phone. */
  reportStatus(patch: Partial<PhoneSim['state']> = {}): void {
    Object.assign(this.state, patch);
    const s = this.state;
    this.send('bridge', 'bridge.status', {
      screen_on: s.screenOn,
      battery: s.battery,
      current_app: s.currentApp,
      accessibility_enabled: true,
      master_enabled: s.masterEnabled,
      device_control_supported: s.deviceControlSupported,
      trusted_destructive_verbs: s.trustedVerbs,
      ...(s.autoDisableMinutes === null ? {} : { auto_disable_minutes: s.autoDisableMinutes }),
    });
  }

  /** Resolves with the next bridge frame of `type` (already received ones count). */
  async nextReceived(type: string, timeoutMs = 3000): Promise<Record<string, unknown>> {
    const start = Date.now();
    let seen = 0;
    for (;;) {
      const hit = this.received.slice(seen).find((f) => f.type === type);
      if (hit) return hit.payload;
      seen = this.received.length;
      if (Date.now() - start > timeoutMs) throw new Error(`phone-sim: no ${type} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private async onFrame(f: { channel: string; type: string; payload: Record<string, unknown> }): Promise<void> {
    if (f.channel === 'system' && f.type === 'session.revoked') return this.say(`session revoked (${String(f.payload.reason)})`);
    if (f.channel === 'system' && f.type === 'error') return this.say(`relay error: ${String(f.payload.message)}`);
    if (f.channel !== 'bridge') return;
    this.received.push({ type: f.type, payload: f.payload });
    switch (f.type) {
      case 'bridge.command':
        return this.onCommand(f.payload as unknown as SimCommand);
      case 'bridge.confirm': {
        const id = String(f.payload.request_id);
        this.say(`confirm? ${String(f.payload.verb)} on ${String(f.payload.path)} → ${this.confirm}`);
        if (this.confirm !== 'ignore') this.send('bridge', 'bridge.confirm.result', { request_id: id, allow: this.confirm === 'allow' });
        return;
      }
      case 'bridge.master_disabled':
        this.say(`Device Control switched off by the relay (${String(f.payload.reason)})`);
        this.reportStatus({ masterEnabled: false });
        return;
      default:
        this.say(`bridge ${f.type} (ignored)`);
    }
  }

  private async onCommand(cmd: SimCommand): Promise<void> {
    this.say(`← ${cmd.method} ${cmd.path}${Object.keys(cmd.body ?? {}).length ? ` {${Object.keys(cmd.body).join(', ')}}` : ''}`);
    const handler = this.handlers[cmd.path];
    const answer = handler ? await handler(cmd, this) : await this.answer(cmd);
    if (answer === null) return this.say(`  (silent on ${cmd.path})`);
    if (this.opts.answerDelayMs) await new Promise((r) => setTimeout(r, this.opts.answerDelayMs));
    this.send('bridge', 'bridge.response', { request_id: cmd.request_id, status: answer.status, result: answer.result });
  }

  /** The built-in answers: a small, consistent phone. */
  async answer(cmd: SimCommand): Promise<SimAnswer> {
    const b = cmd.body ?? {};
    const ok = (result: Record<string, unknown> = {}): SimAnswer => ({ status: 200, result: { ok: true, ...result } });
    let cached: ScreenNode[] | null = null;
    const screenNodes = (): ScreenNode[] => (cached ??= this.screenNodes());
    switch (cmd.path) {
      case '/ping':
        return ok({ pong: true, ts: Date.now() / 1000 });
      case '/setup':
        return ok({ message: 'Device Control is ready', sideload: this.state.deviceControlSupported });
      case '/current_app':
        return ok({ package: this.state.currentApp });
      case '/screen':
        return { status: 200, result: this.screen(cmd.params?.include_bounds !== false) };
      case '/screen_hash':
        return ok({ hash: this.screenHash() });
      case '/diff_screen': {
        const hash = this.screenHash();
        return ok({ hash, changed: hash !== b.previous_hash });
      }
      case '/find_nodes': {
        const hits = screenNodes().filter(
          (n) =>
            (b.text === undefined || (n.text ?? '').toLowerCase().includes(String(b.text).toLowerCase())) &&
            (b.class_name === undefined || n.className === b.class_name) &&
            (b.resource_id === undefined || n.viewId === b.resource_id) &&
            (b.clickable === undefined || n.clickable === b.clickable),
        );
        return ok({ nodes: hits, count: hits.length });
      }
      case '/describe_node': {
        const n = screenNodes().find((x) => x.nodeId === String(b.nodeId));
        return n
          ? ok({ node: { ...n, packageName: this.state.currentApp, childCount: 0, drawingOrder: 1 } })
          : { status: 404, result: { ok: false, error: `no node ${String(b.nodeId)}` } };
      }
      case '/screenshot': {
        const png = makePng(54, 96, this.eventSeq);
        return { status: 200, result: { png_base64: png.toString('base64'), width: 54, height: 96 } };
      }
      case '/get_apps':
        return ok({ apps: APPS });
      case '/tap':
        this.event('view_clicked', null);
        return ok(b.nodeId !== undefined ? { tapped: { nodeId: b.nodeId } } : { tapped: { x: b.x, y: b.y } });
      case '/tap_text': {
        const text = String(b.text).toLowerCase();
        const nodes = screenNodes();
        const n =
          nodes.find((x) => (x.text ?? '').toLowerCase() === text) ??
          (b.exact ? undefined : nodes.find((x) => (x.text ?? '').toLowerCase().includes(text)));
        if (!n) return { status: 404, result: { ok: false, error: 'no node with that text on screen' } };
        this.event('view_clicked', n.text);
        return ok({ tapped: { nodeId: n.nodeId, text: n.text } });
      }
      case '/long_press':
      case '/drag':
      case '/swipe':
        return ok({ performed: cmd.path.slice(1) });
      case '/scroll':
        this.event('view_scrolled', null);
        return ok({ scrolled: b.direction });
      case '/type':
        this.state.focusedText = (b.clearFirst ? '' : this.state.focusedText) + String(b.text ?? '');
        this.event('view_text_changed', null);
        return ok({ typed_chars: String(b.text ?? '').length });
      case '/press_key':
        if (b.key === 'home') this.setForeground('com.android.launcher3');
        return ok({ key: b.key });
      case '/wait': {
        const ms = Math.min(Number(b.timeoutMs) || 0, this.opts.maxWaitMs ?? 15_000);
        const present = typeof b.text === 'string' && screenNodes().some((n) => (n.text ?? '').includes(String(b.text)));
        if (!present) await new Promise((r) => setTimeout(r, ms));
        return ok({ found: present, waited_ms: present ? 0 : ms });
      }
      case '/open_app':
        this.setForeground(String(b.package));
        return ok({ package: b.package, launched: true });
      case '/clipboard':
        if (cmd.method === 'POST') {
          this.state.clipboard = String(b.text ?? '');
          return ok({ set: true });
        }
        return ok({ text: this.state.clipboard });
      case '/media':
        return ok({ action: b.action });
      case '/send_intent':
      case '/broadcast':
        return ok({ action: b.action, delivered: true });
      case '/events': {
        const since = Number(cmd.params?.since ?? 0);
        const limit = Number(cmd.params?.limit ?? 50);
        const events = this.events.filter((e) => e.seq > since).slice(-limit);
        return ok({ events, streaming: this.state.eventsStreaming, next_since: this.eventSeq });
      }
      case '/events/stream':
        this.state.eventsStreaming = b.enabled === true;
        return ok({ enabled: this.state.eventsStreaming });
      case '/location':
        return ok({ latitude: 51.5007, longitude: -0.1246, accuracy_m: 12, provider: 'fused', time: Math.floor(Date.now() / 1000) - 30 });
      case '/search_contacts': {
        const q = String(b.query ?? '').toLowerCase();
        const contacts = CONTACTS.filter((c) => c.name.toLowerCase().includes(q)).slice(0, Number(b.limit ?? 10));
        return ok({ contacts });
      }
      case '/call':
        return ok({ status: 'dialing' });
      case '/send_sms':
        return ok({ status: 'sent' });
      case '/share_media':
        return ok({ status: 'shared', attachments: Array.isArray(b.attachments) ? b.attachments.length : 0 });
      case '/send_mms':
        return ok({ status: 'handed_off', attachments: Array.isArray(b.attachments) ? b.attachments.length : 0 });
      case '/return_to_svc':
        this.setForeground('com.svc.app');
        return ok({ foreground: 'com.svc.app' });
      default:
        return { status: 404, result: { ok: false, error: `phone-sim does not know ${cmd.path}` } };
    }
  }

  private setForeground(pkg: string): void {
    if (this.state.currentApp === pkg) return;
    this.event('window_state_changed', null, pkg);
    this.reportStatus({ currentApp: pkg });
  }

  private event(type: string, text: string | null, pkg = this.state.currentApp): void {
    this.events.push({ seq: ++this.eventSeq, type, package: pkg, text, ts: Date.now() / 1000 });
    if (this.events.length > 200) this.events.shift();
  }

  screenNodes(): ScreenNode[] {
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
      rootBounds: { left: 0, top: 0, right: 1080, bottom: 2340 },
      nodes,
      truncated: false,
      nodeCount: nodes.length,
    };
  }

  screenHash(): string {
    return createHash('sha256')
      .update(JSON.stringify(this.screen(true)))
      .digest('hex');
  }
}

/** `ws://h:p` → `ws://h:p/ws`; `http(s)://` becomes `ws(s)://`; a URL with a path is kept. */
export function wsUrl(relayUrl: string): string {
  const u = new URL(relayUrl.replace(/^http/, 'ws'));
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/ws';
  return u.toString();
}
