import type { SimAnswer, SimCommand } from './bridge-command';
import type { ConfirmPolicy, FakePhone, PhoneState } from './fake-phone';
import { legacyAnswer } from './legacy-mode';
import { makePng } from './png';
import { httpUrl } from './urls';

/**
 * The `app` mode: shaped like the real Android app. Nested `bridge.status` (`bridge {}`, `safety {}`,
 * `device {}`, battery -1 when unknown), `supports` without `bridge_confirm`, its own confirmation (the
 * `confirm` policy is the user at the modal; a denial is 403 `user_denied`), screenshots uploaded with
 * `POST /media/upload` and answered as `{media: "MEDIA:hermes-relay://<token>"}`, arguments read from
 * `body` (`params` only when `body` is absent), `/wait {ms}`, `/swipe` by coordinates only,
 * `POST /return_to_hermes` only, unknown routes 403 `unknown_bridge_command`.
 */
export const APP_SUPPORTS = { typed_stream_events: true, event_schema_version: 1 };

/** Shaped like app/.../accessibility/BridgeStatusReporter.kt emitTick(). */
export function appStatus(s: PhoneState, deviceName: string): Record<string, unknown> {
  const supported = s.deviceControlSupported;
  return {
    device: {
      name: deviceName,
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
  };
}

/** What an app-mode answer needs besides the command: the phone, its user, and the relay it fetches from and uploads to. */
export type AppContext = {
  phone: FakePhone;
  /** The user at the modal. */
  confirm: ConfirmPolicy;
  /** Where each question of the modal is recorded, in order. */
  modalAsked: Array<{ path: string; text: string }>;
  relayUrl: string;
  token: string | null;
  maxWaitMs: number | undefined;
};

/**
 * The real app's dispatcher (app/.../network/relay/BridgeCommandHandler.kt): arguments from `body`,
 * `params` only when `body` is absent; a closed (method, path) registry; its own destructive-verb modal;
 * the app's field names. Null: the modal is left open, no answer.
 */
export async function appAnswer(cmd: SimCommand, ctx: AppContext): Promise<SimAnswer | null> {
  const phone = ctx.phone;
  const raw = cmd as unknown as Record<string, unknown>;
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const b = isObj(raw.body) ? raw.body : isObj(raw.params) ? raw.params : {};
  const key = `${cmd.method} ${cmd.path}`;
  if (!APP_ROUTES.has(key))
    return { status: 403, result: { error: 'Bridge capability is not granted for this connection.', error_code: 'unknown_bridge_command' } };
  if (cmd.path === '/ping') return { status: 200, result: { pong: true, ts: Date.now() } };
  if (!phone.state.deviceControlSupported && cmd.path !== '/setup')
    return {
      status: 403,
      result: { error: 'Device Control is not included in the Google Play build.', error_code: 'device_control_sideload_only' },
    };
  if (!phone.state.masterEnabled && cmd.path !== '/setup')
    return { status: 403, result: { error: 'Bridge agent control is disabled by the user.', error_code: 'bridge_disabled' } };
  const text = APP_CONFIRM_TEXT[cmd.path]?.(b);
  if (text !== undefined && APP_DESTRUCTIVE.some((v) => text.toLowerCase().includes(v))) {
    ctx.modalAsked.push({ path: cmd.path, text });
    if (ctx.confirm === 'ignore') return null; // the modal is left open: no answer
    if (ctx.confirm === 'deny')
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
      return { status: 200, result: phone.screen(includeBounds) };
    }
    case '/find_nodes': {
      const limit = int(b.limit) ?? 20;
      const hits = phone
        .screenNodes()
        .filter(
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
      const entries = phone.events.filter((e) => e.ts * 1000 > since).slice(-limit);
      return ok({ entries, count: entries.length, streaming: phone.state.eventsStreaming });
    }
    case '/swipe': {
      const [sx, sy, ex, ey] = [b.start_x, b.start_y, b.end_x, b.end_y].map(int);
      if (sx === null || sy === null || ex === null || ey === null) return fail('swipe requires start_x, start_y, end_x, end_y');
      return ok({ swiped: { start_x: sx, start_y: sy, end_x: ex, end_y: ey }, duration_ms: int(b.duration_ms) ?? 400 });
    }
    case '/wait': {
      const ms = Math.min(Math.max(int(b.ms) ?? 0, 0), Math.min(15_000, ctx.maxWaitMs ?? 15_000));
      await new Promise((r) => setTimeout(r, ms));
      return ok({ slept_ms: ms });
    }
    case '/tap': {
      if (typeof b.nodeId === 'string' && b.nodeId !== '') return ok({ tapped_node: b.nodeId });
      const [x, y] = [int(b.x), int(b.y)];
      if (x === null || y === null) return fail("missing 'x' or 'y' in body");
      phone.event('view_clicked', null);
      return ok({ x, y });
    }
    case '/tap_text': {
      if (!b.text) return fail("missing 'text' in body");
      const n = phone.screenNodes().find((x) => (x.text ?? '').toLowerCase().includes(String(b.text).toLowerCase()));
      return n ? ok({ tapped: n.text, nodeId: n.nodeId }) : fail(`no node with text '${String(b.text)}'`);
    }
    case '/media': {
      const action = String(b.action ?? '').toLowerCase();
      if (!['play', 'pause', 'toggle', 'next', 'previous'].includes(action)) return fail(`Unknown media action: ${action}`);
      return ok({ action });
    }
    case '/return_to_hermes':
      phone.setForeground('com.hermesandroid.relay');
      return ok({ ok: true, package: 'com.hermesandroid.relay' });
    case '/screenshot': {
      try {
        const token = await uploadScreenshot(ctx.relayUrl, ctx.token, makePng(54, 96, phone.eventSeq));
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
        const res = await fetch(`${httpUrl(ctx.relayUrl)}/media/${encodeURIComponent(token)}`, {
          headers: { authorization: `Bearer ${ctx.token}` },
        });
        await res.arrayBuffer();
        fetched.push({ token: token.slice(0, 8), status: res.status });
        if (res.status !== 200)
          return { status: 400, result: { error: `media fetch failed (${res.status})`, status: 'failed', reason: 'media_fetch_failed' } };
      }
      return ok({ status: cmd.path === '/send_mms' ? 'compose_opened' : 'share_opened', attachment_count: fetched.length });
    }
    default: {
      const legacy = await legacyAnswer({ ...cmd, body: b, params: b }, phone, ctx.maxWaitMs);
      return legacy;
    }
  }
}

/** `POST /media/upload` multipart with one `file` part, as ScreenCapture.uploadViaMultipart does; returns the token. */
export async function uploadScreenshot(relayUrl: string, token: string | null, png: Buffer): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), `hermes-screenshot-${Date.now()}.png`);
  const res = await fetch(`${httpUrl(relayUrl)}/media/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    body: form,
  });
  const raw = await res.text();
  if (res.status !== 200) throw new Error(`relay upload failed (HTTP ${res.status})`);
  const m = /"token"\s*:\s*"([^"]+)"/.exec(raw);
  if (!m) throw new Error('relay returned success but no token');
  return m[1];
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
