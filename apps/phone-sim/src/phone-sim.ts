import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { AppContext } from './app-context';
import { uploadScreenshot } from './app-media';
import { appAnswer, appCommandOf, appStatus, APP_STATUS_TICK_MS, APP_SUPPORTS } from './app-mode';
import { AppSafety } from './app-safety';
import type { SimAnswer, SimCommand } from './bridge-command';
import { FakePhone, type ConfirmPolicy, type PhoneState, type ScreenNode } from './fake-phone';
import { MAX_FRAME_BYTES, printable, readFrame, type Frame } from './frames';
import { legacyAnswer, legacyStatus, LEGACY_SUPPORTS } from './legacy-mode';
import { catalogOf, type CatalogRow } from './phone-profiles';
import { wsUrl } from './urls';

export type { SimAnswer, SimCommand } from './bridge-command';
export type { ConfirmPolicy, ScreenNode } from './fake-phone';
export { httpUrl, wsUrl } from './urls';

/** Return null to stay silent (the relay then times out). */
export type SimHandler = (cmd: SimCommand, sim: PhoneSim) => SimAnswer | null | Promise<SimAnswer | null>;

export type PhoneSimMode = 'legacy' | 'app';

export type PhoneSimOptions = {
  /** `app`: behaves as the real Android app (app-mode.ts). Default `legacy`. */
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
  /** The screen in pixels, screenshots full size at it (default: a 1080x2340 screen, 54x96 screenshots; fake-phone.ts). */
  screen?: { width: number; height: number };
  /** `apps`: screens that taps and typing change (launcher, messaging, settings; sim-screens.ts). Default `fixed`. */
  ui?: 'fixed' | 'apps';
  /** `apps`: how long a sent message says `Sending…` (default 1500 ms). */
  deliveryMs?: number;
  trustedVerbs?: string[];
  /** legacy: reported as is (absent: the relay's default applies); app: its own idle minutes, 5-120, default 30. */
  autoDisableMinutes?: number | null;
  /** The phone's own clock (epoch ms; default the wall clock): its idle expiry in app mode, its event times. */
  now?: () => number;
  /** app mode: the status tick (default 30000, as the app's); 0: none (call `tick()`). Legacy mode never ticks. */
  statusTickMs?: number;
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

/**
 * A simulated sideload phone for the bridge: pairs (or reconnects with a token), reports
 * `bridge.status`, answers every Device Control command with plausible data, and answers destructive-
 * verb confirmations by policy. Used by the e2e tests, the benchmark, the console demo and
 * `svc phone-sim`. It is a client of the relay and imports nothing of it.
 *
 * This file is the client (socket, auth, frames); the phone it simulates is `fake-phone.ts`; the two
 * shapes (`mode`) are `app-mode.ts` with `app-*.ts` (behaves as the real Android app, frame by frame:
 * docs/COMPATIBILITY.md) and `legacy-mode.ts` (the default: flat status, answers `bridge.confirm` and
 * `bridge.master_disabled`, inline screenshots).
 */
export class PhoneSim {
  ws: WebSocket | null = null;
  token: string | null = null;
  tokenPrefix: string | null = null;
  /** Every bridge frame the relay sent, in order. */
  readonly received: Array<{ type: string; payload: Record<string, unknown> }> = [];
  /** The simulated phone (its state is `state`). */
  readonly phone: FakePhone;
  readonly state: PhoneState;
  confirm: ConfirmPolicy;
  readonly mode: PhoneSimMode;
  /** app mode: what the phone's own confirmation modal was asked, in order. */
  readonly modalAsked: Array<{ path: string; text: string }> = [];
  readonly handlers: Record<string, SimHandler>;
  /** app mode: the app's own rails (blocklist, verbs, modal, capability grants and their idle expiry). */
  readonly safety: AppSafety;
  /** How often the status is re-sent (0: never on its own). */
  readonly statusTickMs: number;
  /** This phone's `device_id` (the app's is a UUID it keeps; AuthManager.kt:776). */
  readonly deviceId: string;
  /** `auth.ok`'s `grants` (channel → epoch seconds or null): what this session may use. */
  grants: Record<string, unknown> = {};
  /** `auth.ok`'s profile catalog (phone-profiles.ts). */
  profiles: CatalogRow[] = [];
  /** Who hears the frames of the channels other than `bridge` and `system` (phone-flows.ts). */
  private readonly listeners = new Map<string, (f: Frame) => void>();
  private ticker: NodeJS.Timeout | null = null;
  private closedResolve!: (code: number) => void;
  readonly closed: Promise<number>;

  constructor(readonly opts: PhoneSimOptions) {
    this.mode = opts.mode ?? 'legacy';
    const now = opts.now ?? Date.now;
    // The app reports a new foreground app only on its next tick (BridgeStatusReporter.kt:104,147-159); legacy at once.
    this.phone = new FakePhone(opts, (pkg) => (this.mode === 'app' ? (this.state.currentApp = pkg) : this.reportStatus({ currentApp: pkg })), now);
    this.state = this.phone.state;
    this.safety = new AppSafety(opts.autoDisableMinutes ?? null, now, opts.trustedVerbs ?? []);
    this.statusTickMs = this.mode === 'app' ? (opts.statusTickMs ?? APP_STATUS_TICK_MS) : 0;
    this.confirm = opts.confirm ?? 'allow';
    this.handlers = { ...opts.handlers };
    this.deviceId = opts.deviceId ?? `phone-sim-${randomUUID().slice(0, 8)}`;
    this.closed = new Promise((r) => (this.closedResolve = r));
  }

  /** Says what happened; peer text inside it is made printable here, in one place (no escape sequence reaches the terminal). */
  say(line: string): void {
    this.opts.log?.(printable(line, 2000));
  }

  /** Connects and authenticates; resolves once `system/auth.ok` arrived and the status was sent. */
  start(): Promise<this> {
    const url = wsUrl(this.opts.relayUrl);
    // A relay is a peer like any other: a frame past the bound closes the socket (1009) instead of filling memory.
    const ws = new WebSocket(url, { maxPayload: MAX_FRAME_BYTES, ...this.opts.wsOptions });
    this.ws = ws;
    return new Promise((resolve, reject) => {
      let authed = false;
      ws.once('open', () => {
        const auth: Record<string, unknown> = {
          device_name: this.opts.deviceName ?? 'Phone simulator',
          device_id: this.deviceId,
          device_model: 'svc phone-sim',
          device_platform: 'android',
          client_surface: this.mode === 'app' ? 'android' : 'phone-sim',
          // The app advertises stream capabilities only; a phone that answers bridge.confirm says so.
          supports: this.mode === 'app' ? APP_SUPPORTS : LEGACY_SUPPORTS,
        };
        if (this.opts.token) auth.session_token = this.opts.token;
        else if (this.opts.code) auth.pairing_code = this.opts.code;
        else return reject(new Error('phone-sim needs a pairing code or a session token'));
        this.send('system', 'auth', auth, 'auth');
      });
      ws.on('message', (data) => {
        const f = readFrame(data);
        if (!f) return this.say('dropped a frame that is not a JSON envelope');
        if (f.channel === 'system' && f.type === 'auth.ok' && !authed) {
          if (typeof f.payload.session_token !== 'string' || !f.payload.session_token) return reject(new Error('auth.ok without a session token'));
          authed = true;
          this.token = f.payload.session_token;
          this.grants = typeof f.payload.grants === 'object' && f.payload.grants !== null ? (f.payload.grants as Record<string, unknown>) : {};
          this.tokenPrefix = this.token.slice(0, 8);
          // The profile catalog the app keeps from auth.ok (AuthManager.kt:285-300), validated row by row.
          this.profiles = catalogOf(f.payload.profiles);
          this.say(`paired: token prefix ${this.tokenPrefix}`);
          // The app's ticks run on their own cadence; the first one to land after auth.ok is the one here (it drops
          // frames before it, ConnectionManager.kt:932-943, so a real app may take up to a tick to show up).
          this.reportStatus();
          if (this.statusTickMs > 0) this.ticker = setInterval(() => this.tick(), this.statusTickMs).unref();
          resolve(this);
          return;
        }
        if (f.channel === 'system' && f.type === 'auth.fail') {
          reject(new Error(`auth failed: ${String(f.payload.reason)}`));
          return;
        }
        // A handler that throws on a hostile frame says so and the phone stays up (an unhandled rejection ends Node).
        this.onFrame(f).catch((err: Error) => this.say(`could not handle ${f.channel}/${f.type}: ${err.message}`));
      });
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', (err) => (authed ? this.say(`socket error: ${err.message}`) : reject(err)));
      ws.on('close', (code) => {
        if (this.ticker) clearInterval(this.ticker);
        this.say(`closed (${code})`);
        this.closedResolve(code);
        if (!authed) reject(new Error(`closed before auth (${code})`));
      });
    });
  }

  stop(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ws?.close();
  }

  send(channel: string, type: string, payload: Record<string, unknown>, id?: string): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ channel, type, id: id ?? randomUUID(), payload }));
  }

  /**
   * Sends `bridge.status` at once, after applying a change to the simulated phone: in app mode, what the app does
   * when its master toggle flips (pushNow, ConnectionViewModel.kt:3619-3631).
   */
  reportStatus(patch: Partial<PhoneState> = {}): void {
    Object.assign(this.state, patch);
    const deviceName = this.opts.deviceName ?? 'Phone simulator';
    const now = this.phone.now();
    this.send('bridge', 'bridge.status', this.mode === 'app' ? appStatus(this.phone, this.safety, deviceName, now) : legacyStatus(this.state));
  }

  /** One status tick: the status as the phone is now (BridgeStatusReporter.kt:166-354). */
  tick(): void {
    this.reportStatus();
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

  /** Hands every frame of `channel` (any but `bridge`; `system` after auth) to `fn`; one listener per channel. */
  listen(channel: string, fn: (f: Frame) => void): void {
    this.listeners.set(channel, fn);
  }

  private async onFrame(f: Frame): Promise<void> {
    if (f.channel === 'system' && f.type === 'session.revoked') return this.say(`session revoked (${String(f.payload.reason)})`);
    if (f.channel === 'system' && f.type === 'error') this.say(`relay error: ${String(f.payload.message)}`);
    if (f.channel !== 'bridge') return this.listeners.get(f.channel)?.(f);
    this.received.push({ type: f.type, payload: f.payload });
    if (this.mode === 'app') {
      // The app acts on bridge.command alone and drops the rest, bridge.master_disabled and bridge.confirm included.
      const cmd = appCommandOf(f.type, f.payload);
      return cmd ? this.onCommand(cmd) : this.say(`bridge ${f.type} (dropped, as the app does)`);
    }
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

  /** The legacy mode's built-in answer to a command (a handler may fall back to it). */
  answer(cmd: SimCommand): Promise<SimAnswer> {
    return legacyAnswer(cmd, this.phone, this.opts.maxWaitMs);
  }

  /** The app mode's answer to a command; null while its confirmation modal is left open. */
  appAnswer(cmd: SimCommand): Promise<SimAnswer | null> {
    return appAnswer(cmd, this.appContext());
  }

  /** app mode: uploads a screenshot as the app does; returns the media token. */
  uploadScreenshot(png: Buffer): Promise<string> {
    return uploadScreenshot(this.opts.relayUrl, this.token, png, this.phone.now());
  }

  screenNodes(): ScreenNode[] {
    return this.phone.screenNodes();
  }

  screen(includeBounds = true): Record<string, unknown> {
    return this.phone.screen(includeBounds);
  }

  screenHash(): string {
    return this.phone.screenHash();
  }

  private appContext(): AppContext {
    return {
      phone: this.phone,
      safety: this.safety,
      now: this.phone.now,
      confirm: this.confirm,
      modalAsked: this.modalAsked,
      relayUrl: this.opts.relayUrl,
      token: this.token,
      maxWaitMs: this.opts.maxWaitMs,
    };
  }
}
