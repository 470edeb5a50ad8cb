import { createHash, randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { makePng } from './png';

/**
 * A simulated sideload phone for the bridge: pairs (or reconnects with a token), reports
 * `bridge.status`, answers every Device Control command with plausible data, and answers destructive-
 * verb confirmations by policy. Used by the e2e tests, the benchmark, the console demo and
 * `svc phone-sim`.
 *
 * Two shapes (`mode`):
 * - `app` behaves like the real Android app: nested `bridge.status` (`bridge {}`, `safety {}`,
 *   `device {}`, battery -1 when unknown), `supports` without `bridge_confirm`, its own confirmation
 *   (the `confirm` policy is the user at the modal; a denial is 403 `user_denied`), screenshots uploaded
 *   with `POST /media/upload` and answered as `{media: "MEDIA:hermes-relay://<token>"}`, arguments read
 *   from `body` (`params` only when `body` is absent), `/wait {ms}`, `/swipe` by coordinates only,
 *   `POST /return_to_hermes` only, unknown routes 403 `unknown_bridge_command`.
 * - `legacy` (default): flat status, answers `bridge.confirm` (`supports.bridge_confirm: true`), sends
 *   screenshots inline as `png_base64`.
 */
export type ConfirmPolicy = 'allow' | 'deny' | 'ignore';

export type SimCommand = { request_id: string; method: string; path: string; params: Record<string, unknown>; body: Record<string, unknown> };
export type SimAnswer = { status: number; result: unknown };
/** Return null to stay silent (the relay then times out). */
export type SimHandler = (cmd: SimCommand, sim: PhoneSim) => SimAnswer | null | Promise<SimAnswer | null>;

export type PhoneSimMode = 'legacy' | 'app';

export type PhoneSimOptions = {
  /** `app`: shaped like the real Android app (see the class comment). Default `legacy`. */
  mode?: PhoneSimMode;
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
  /** Options for the socket (a pinned CA for Secure Link, a `createConnection` for a Reach stream). */
  wsOptions?: import('ws').ClientOptions;
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
  readonly mode: PhoneSimMode;
  /** app mode: what the phone's own confirmation modal was asked, in order. */
  readonly modalAsked: Array<{ path: string; text: string }> = [];
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
    this.mode = opts.mode ?? 'legacy';
    this.handlers = { ...opts.handlers };
    this.closed = new Promise((r) => (this.closedResolve = r));
  }

  private say(line: string): void {
    this.opts.log?.(line);
  }

  /** Connects and authenticates; resolves once `system/auth.ok` arrived and the status was sent. */
  start(): Promise<this> {
    const url = wsUrl(this.opts.relayUrl);
    const ws = new WebSocket(url, this.opts.wsOptions);
    this.ws = ws;
    return new Promise((resolve, reject) => {
      let authed = false;
      ws.once('open', () => {
        const auth: Record<string, unknown> = {
          device_name: this.opts.deviceName ?? 'Phone simulator',
          device_id: this.opts.deviceId ?? `phone-sim-${randomUUID().slice(0, 8)}`,
          device_model: 'svc phone-sim',
          device_platform: 'android',
          client_surface: this.mode === 'app' ? 'android' : 'phone-sim',
          // The app advertises stream capabilities only; a phone that answers bridge.confirm says so.
          supports: this.mode === 'app' ? { typed_stream_events: true, event_schema_version: 1 } : { bridge_confirm: true },
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
    if (this.mode === 'app') {
      // Shaped like app/.../accessibility/BridgeStatusReporter.kt emitTick().
      const supported = s.deviceControlSupported;
      this.send('bridge', 'bridge.status', {
        device: {
          name: this.opts.deviceName ?? 'Phone simulator',
          battery_percent: s.battery,
          screen_on: s.screenOn,
          current_app: s.currentApp || 'unknown',
          flavor: supported ? 'sideload' : 'googlePlay',
        },
        bridge: {
          device_control_supported: supported,
          master_enabled: supported ? s.masterEnabled : false,
          accessibility_granted: supported,
          screen_capture_granted: supported,
          overlay_granted: supported,
          notification_listener_granted: false,
        },
        safety: {
          blocklist_count: 3,
          destructive_verbs_count: 8,
          auto_disable_minutes: s.autoDisableMinutes ?? 0,
          auto_disable_at_ms: null,
        },
        capabilities: { schema_version: 1, permanent: [], timed: {}, unlimited: [] },
        unattended: { supported, enabled: false },
        screen_on: s.screenOn,
        battery: s.battery,
        current_app: supported ? s.currentApp || 'unknown' : 'unknown',
        accessibility_enabled: supported,
        ts: Date.now(),
      });
      return;
    }
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
    const answer = handler ? await handler(cmd, this) : this.mode === 'app' ? await this.appAnswer(cmd) : await this.answer(cmd);
    if (answer === null) return this.say(`  (silent on ${cmd.path})`);
    if (this.opts.answerDelayMs) await new Promise((r) => setTimeout(r, this.opts.answerDelayMs));
    this.send('bridge', 'bridge.response', { request_id: cmd.request_id, status: answer.status, result: answer.result });
  }

  /**
   * app mode: the real app's dispatcher (app/.../network/relay/BridgeCommandHandler.kt): arguments
   * from `body`, `params` only when `body` is absent; a closed (method, path) registry; its own
   * destructive-verb modal; the app's field names.
   */
  async appAnswer(cmd: SimCommand): Promise<SimAnswer> {
    const raw = cmd as unknown as Record<string, unknown>;
    const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
    const b = isObj(raw.body) ? raw.body : isObj(raw.params) ? raw.params : {};
    const key = `${cmd.method} ${cmd.path}`;
    if (!APP_ROUTES.has(key))
      return { status: 403, result: { error: 'Bridge capability is not granted for this connection.', error_code: 'unknown_bridge_command' } };
    if (cmd.path === '/ping') return { status: 200, result: { pong: true, ts: Date.now() } };
    if (!this.state.deviceControlSupported && cmd.path !== '/setup')
      return {
        status: 403,
        result: { error: 'Device Control is not included in the Google Play build.', error_code: 'device_control_sideload_only' },
      };
    if (!this.state.masterEnabled && cmd.path !== '/setup')
      return { status: 403, result: { error: 'Bridge agent control is disabled by the user.', error_code: 'bridge_disabled' } };
    const text = APP_CONFIRM_TEXT[cmd.path]?.(b);
    if (text !== undefined && APP_DESTRUCTIVE.some((v) => text.toLowerCase().includes(v))) {
      this.modalAsked.push({ path: cmd.path, text });
      if (this.confirm === 'ignore') return null as unknown as SimAnswer; // the modal is left open: no answer
      if (this.confirm === 'deny')
        return {
          status: 403,
          result: {
            error: `The user denied a destructive '${cmd.path}' action via the on-device confirmation modal.`,
            error_code: 'user_denied',
            status: 'blocked',
            android_result: 'user_denied',
            reason: 'confirmation_denied_or_timeout',
            final: true,
          },
        };
    }
    const ok = (data: Record<string, unknown> = {}): SimAnswer => ({ status: 200, result: Object.keys(data).length ? data : { ok: true } });
    const fail = (error: string): SimAnswer => ({ status: 400, result: { error } });
    const int = (v: unknown): number | null => (v === undefined || v === null || !Number.isFinite(Number(v)) ? null : Math.trunc(Number(v)));
    switch (cmd.path) {
      case '/screen': {
        const includeBounds = b.include_bounds === undefined ? true : String(b.include_bounds) === 'true';
        return { status: 200, result: this.screen(includeBounds) };
      }
      case '/find_nodes': {
        const limit = int(b.limit) ?? 20;
        const hits = this.screenNodes().filter(
          (n) =>
            (b.text === undefined || (n.text ?? '').toLowerCase().includes(String(b.text).toLowerCase())) &&
            (b.class_name === undefined || n.className === b.class_name) &&
            (b.clickable === undefined || n.clickable === b.clickable),
        );
        return ok({ matches: hits.slice(0, limit), count: Math.min(hits.length, limit) });
      }
      case '/events': {
        const limit = Math.min(Math.max(int(b.limit) ?? 50, 1), 500);
        const since = int(b.since) ?? 0;
        const entries = this.events.filter((e) => e.ts * 1000 > since).slice(-limit);
        return ok({ entries, count: entries.length, streaming: this.state.eventsStreaming });
      }
      case '/swipe': {
        const [sx, sy, ex, ey] = [b.start_x, b.start_y, b.end_x, b.end_y].map(int);
        if (sx === null || sy === null || ex === null || ey === null) return fail('swipe requires start_x, start_y, end_x, end_y');
        return ok({ swiped: { start_x: sx, start_y: sy, end_x: ex, end_y: ey }, duration_ms: int(b.duration_ms) ?? 400 });
      }
      case '/wait': {
        const ms = Math.min(Math.max(int(b.ms) ?? 0, 0), Math.min(15_000, this.opts.maxWaitMs ?? 15_000));
        await new Promise((r) => setTimeout(r, ms));
        return ok({ slept_ms: ms });
      }
      case '/tap': {
        if (typeof b.nodeId === 'string' && b.nodeId !== '') return ok({ tapped_node: b.nodeId });
        const [x, y] = [int(b.x), int(b.y)];
        if (x === null || y === null) return fail("missing 'x' or 'y' in body");
        this.event('view_clicked', null);
        return ok({ x, y });
      }
      case '/tap_text': {
        if (!b.text) return fail("missing 'text' in body");
        const n = this.screenNodes().find((x) => (x.text ?? '').toLowerCase().includes(String(b.text).toLowerCase()));
        return n ? ok({ tapped: n.text, nodeId: n.nodeId }) : fail(`no node with text '${String(b.text)}'`);
      }
      case '/media': {
        const action = String(b.action ?? '').toLowerCase();
        if (!['play', 'pause', 'toggle', 'next', 'previous'].includes(action)) return fail(`Unknown media action: ${action}`);
        return ok({ action });
      }
      case '/return_to_hermes':
        this.setForeground('com.hermesandroid.relay');
        return ok({ ok: true, package: 'com.hermesandroid.relay' });
      case '/screenshot': {
        try {
          const token = await this.uploadScreenshot(makePng(54, 96, this.eventSeq));
          return { status: 200, result: { media: `MEDIA:hermes-relay://${token}` } };
        } catch (err) {
          return { status: 500, result: { error: (err as Error).message } };
        }
      }
      case '/share_media':
      case '/send_mms': {
        const atts = Array.isArray(b.attachments) ? (b.attachments as Array<Record<string, unknown>>) : [];
        const refs = atts.map((a) => String(a.media ?? a.media_token ?? a.token ?? a.path ?? ''));
        // The app fetches MEDIA:hermes-relay://<token> (and bare tokens); another scheme fails the fetch.
        const fetched: Array<{ token: string; status: number }> = [];
        for (const r of refs) {
          const token = r.startsWith('MEDIA:hermes-relay://') ? r.slice('MEDIA:hermes-relay://'.length) : r.startsWith('MEDIA:') ? r.slice(6) : r;
          const res = await fetch(`${httpUrl(this.opts.relayUrl)}/media/${encodeURIComponent(token)}`, {
            headers: { authorization: `Bearer ${this.token}` },
          });
          await res.arrayBuffer();
          fetched.push({ token: token.slice(0, 8), status: res.status });
          if (res.status !== 200)
            return { status: 400, result: { error: `media fetch failed (${res.status})`, status: 'failed', reason: 'media_fetch_failed' } };
        }
        return ok({ status: cmd.path === '/send_mms' ? 'compose_opened' : 'share_opened', attachment_count: fetched.length });
      }
      default: {
        const legacy = await this.answer({ ...cmd, body: b, params: b });
        return legacy;
      }
    }
  }

  /** app mode: `POST /media/upload` multipart with one `file` part, as ScreenCapture.uploadViaMultipart does; returns the token. */
  async uploadScreenshot(png: Buffer): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), `hermes-screenshot-${Date.now()}.png`);
    const res = await fetch(`${httpUrl(this.opts.relayUrl)}/media/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, accept: 'application/json' },
      body: form,
    });
    const raw = await res.text();
    if (res.status !== 200) throw new Error(`relay upload failed (HTTP ${res.status})`);
    const m = /"token"\s*:\s*"([^"]+)"/.exec(raw);
    if (!m) throw new Error('relay returned success but no token');
    return m[1];
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
        const ms = Math.min(Number(b.timeoutMs ?? b.ms) || 0, this.opts.maxWaitMs ?? 15_000);
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
      case '/return_to_hermes':
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

/** The relay's HTTP origin from the URL the simulator was given. */
export function httpUrl(relayUrl: string): string {
  const u = new URL(relayUrl.replace(/^ws/, 'http'));
  return u.origin;
}

/** The app's closed (method, path) registry (app/.../bridge/BridgeCapabilities.kt BridgeCommandRegistry). */
const APP_ROUTES = new Set([
  'GET /ping',
  'POST /setup',
  'POST /wait',
  'GET /current_app',
  'GET /get_apps',
  'GET /apps',
  'POST /search_contacts',
  'GET /location',
  'GET /clipboard',
  'POST /clipboard',
  'POST /media',
  'POST /call',
  'POST /send_sms',
  'POST /share_media',
  'POST /send_mms',
  ...['/screen', '/screenshot', '/screen_hash', '/events'].map((p) => `GET ${p}`),
  ...['/find_nodes', '/describe_node', '/diff_screen', '/events/stream'].map((p) => `POST ${p}`),
  ...[
    '/tap',
    '/tap_text',
    '/long_press',
    '/type',
    '/swipe',
    '/drag',
    '/scroll',
    '/press_key',
    '/open_app',
    '/return_to_hermes',
    '/send_intent',
    '/broadcast',
  ].map((p) => `POST ${p}`),
]);

/** What the app's modal inspects per route (extractDestructiveVerbText, plus /call and /send_sms always asking). */
const APP_CONFIRM_TEXT: Record<string, (b: Record<string, unknown>) => string | undefined> = {
  '/tap_text': (b) => (typeof b.text === 'string' ? b.text : undefined),
  '/type': (b) => (typeof b.text === 'string' ? b.text : undefined),
  '/call': (b) => `call ${String(b.number ?? '')}`,
  '/send_sms': (b) => `send sms to ${String(b.to ?? '')}`,
  '/send_mms': (b) => `send mms to ${String(b.to ?? '')}`,
};
const APP_DESTRUCTIVE = ['send', 'pay', 'delete', 'transfer', 'confirm', 'submit', 'post', 'publish', 'buy', 'purchase', 'call'];

/** `ws://h:p` → `ws://h:p/ws`; `http(s)://` becomes `ws(s)://`; a URL with a path is kept. */
export function wsUrl(relayUrl: string): string {
  const u = new URL(relayUrl.replace(/^http/, 'ws'));
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/ws';
  return u.toString();
}
