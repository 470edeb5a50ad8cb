import type { SimAnswer, SimCommand } from './bridge-command';
import type { FakePhone } from './fake-phone';
import { CAPABILITIES, type AppSafety, type Capability } from './app-safety';
import { userDenied, type AppContext, type Body } from './app-context';
import { appRoute, nodeText } from './app-routes';

/*
 * The `app` mode: the simulator behaves as the real Android app, frame by frame (docs/COMPATIBILITY.md, "The
 * simulator's app mode", lists each behaviour with the app's file and line; paths below are under
 * app/src/main/kotlin/com/hermesandroid/relay/). This file is its status and its dispatcher's gates, in the app's
 * order; app-safety.ts its own rails and idle expiry; app-routes.ts what each route answers.
 */

/** auth/AuthManager.kt:820-825: stream capabilities only; no bridge_confirm, no bridge_master_disabled. */
export const APP_SUPPORTS = { typed_stream_events: true, event_schema_version: 1 };

/** accessibility/BridgeStatusReporter.kt:104: the status tick. */
export const APP_STATUS_TICK_MS = 30_000;

/** Shaped like accessibility/BridgeStatusReporter.kt emitTick() (:238-351). */
export function appStatus(phone: FakePhone, safety: AppSafety, deviceName: string, now: number): Record<string, unknown> {
  const s = phone.state;
  const supported = s.deviceControlSupported;
  return {
    device: {
      name: deviceName,
      battery_percent: s.battery,
      screen_on: s.screenOn,
      current_app: s.currentApp || 'unknown',
      flavor: supported ? 'sideload' : 'googlePlay',
      application_id: 'com.hermesandroid.relay',
    },
    bridge: {
      device_control_supported: supported,
      master_enabled: supported ? s.masterEnabled : false,
      accessibility_granted: supported,
      screen_capture_granted: supported,
      overlay_granted: supported,
      notification_listener_granted: false,
    },
    safety: safety.statusSafety(),
    capabilities: safety.statusCapabilities(),
    unattended: { supported, enabled: false, credential_lock_detected: false },
    screen_on: s.screenOn,
    battery: s.battery,
    current_app: supported ? s.currentApp || 'unknown' : 'unknown',
    accessibility_enabled: supported,
    ts: now,
  };
}

/**
 * The bridge frames the app acts on (network/relay/BridgeCommandHandler.kt:270-307): `bridge.command` with a
 * `request_id`, its arguments from `body` (`params` only when `body` is no object). Anything else is dropped,
 * `bridge.master_disabled` and `bridge.confirm` included. Null: drop it.
 */
export function appCommandOf(type: string, payload: Record<string, unknown>): SimCommand | null {
  if (type !== 'bridge.command') return null;
  if (payload.request_id === undefined || payload.request_id === null) return null;
  const isObj = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
  const body = isObj(payload.body) ? payload.body : isObj(payload.params) ? payload.params : {};
  return {
    request_id: String(payload.request_id as string),
    method: typeof payload.method === 'string' ? payload.method : '',
    path: typeof payload.path === 'string' ? payload.path : '',
    params: body,
    body,
  };
}

/** bridge/BridgeCapabilities.kt:52-80: the closed (method, path) registry and each route's grant. */
const REGISTRY = new Map<string, Capability | 'exempt'>([
  ['GET /ping', 'exempt'],
  ['POST /setup', 'exempt'],
  ['POST /wait', 'exempt'],
  ['GET /current_app', 'device_info'],
  ['GET /get_apps', 'device_info'],
  ['GET /apps', 'device_info'],
  ['POST /search_contacts', 'contacts_read'],
  ['GET /location', 'location_read'],
  ['GET /clipboard', 'clipboard_read'],
  ['POST /clipboard', 'clipboard_write'],
  ['POST /media', 'media_control'],
  ['POST /call', 'communications'],
  ['POST /send_sms', 'communications'],
  ['POST /share_media', 'outbound_sharing'],
  ['POST /send_mms', 'outbound_sharing'],
  ...['/screen', '/screenshot', '/screen_hash', '/events'].map((p): [string, Capability] => [`GET ${p}`, 'screen_inspection']),
  ...['/find_nodes', '/describe_node', '/diff_screen', '/events/stream'].map((p): [string, Capability] => [`POST ${p}`, 'screen_inspection']),
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
  ].map((p): [string, Capability] => [`POST ${p}`, 'screen_control']),
]);

const forbidden = (result: Body): SimAnswer => ({ status: 403, result });

/**
 * The app's dispatcher (BridgeCommandHandler.kt:424-724), gate by gate in its order, then the route. Null: the
 * modal is left open and the command never answers. A throw is the app's 500 (:296-305).
 */
export async function appAnswer(cmd: SimCommand, ctx: AppContext): Promise<SimAnswer | null> {
  try {
    return await dispatch(cmd, ctx);
  } catch (err) {
    return { status: 500, result: { error: (err as Error).message || 'unknown executor error' } };
  }
}

async function dispatch(cmd: SimCommand, ctx: AppContext): Promise<SimAnswer | null> {
  const { phone, safety } = ctx;
  const path = cmd.path.trim();
  const b = cmd.body;
  // :431-475 the registry, then the capability grant (timed ones end when idle: BridgeSafetyManager.kt:199-223).
  const grant = REGISTRY.get(`${cmd.method.trim().toUpperCase()} ${path}`);
  const sideload = phone.state.deviceControlSupported;
  let refused: { code: string; capability?: Capability } | null = null;
  if (grant === undefined) refused = { code: 'unknown_bridge_command' };
  else if (!sideload && grant !== 'exempt') refused = { code: 'device_control_sideload_only', capability: grant };
  else if (grant !== 'exempt' && !safety.allows(grant))
    refused = { code: CAPABILITIES[grant] ? 'bridge_capability_expired' : 'bridge_capability_denied', capability: grant };
  if (refused)
    return forbidden({
      error:
        refused.code === 'device_control_sideload_only'
          ? 'Device Control is not included in the Google Play build.'
          : 'Bridge capability is not granted for this connection.',
      error_code: refused.code,
      ...(refused.capability ? { capability: refused.capability } : {}),
      required_action: 'Review Bridge > Safety & capabilities on the phone',
    });
  // :520-548 the two answers that need nothing of the phone.
  if (path === '/ping') return { status: 200, result: { pong: true, ts: ctx.now() } };
  if (path === '/setup') return { status: 200, result: { ok: true, note: 'setup is host-side only — phone has no setup work' } };
  // :550-570 (only /wait gets here on a Play build).
  if (!sideload)
    return forbidden({
      error:
        'Device Control is not included in the Google Play build of Hermes-Relay. This build keeps Hermes Bridge Core features such as chat, voice, terminal, media, notifications, and relay status, but it does not ship AccessibilityService, screen reading, taps, typing, screenshots, SMS, calls, or unattended phone control. Install the sideload build for Device Control.',
      error_code: 'device_control_sideload_only',
      flavor: 'googlePlay',
    });
  // :594-624 the master toggle, for every route but /ping and /setup.
  if (!phone.state.masterEnabled)
    return forbidden({
      error:
        "Bridge agent control is disabled by the user. The phone IS paired and connected — this is NOT a pairing problem. The user must enable 'Agent Control' in the Hermes Bridge tab master toggle before the bridge accepts commands.",
      error_code: 'bridge_disabled',
      required_action: 'User toggles Agent Control ON in the Hermes Bridge tab',
    });
  // :627-636 its own blocklist, on the foreground app.
  if (!safety.packageAllowed(phone.state.currentApp)) return forbidden({ error: `blocked package ${phone.state.currentApp || 'unknown'}` });
  // :649-662 its own modal, on the text the command acts on.
  const text = destructiveText(path, b, phone);
  if (safety.requiresConfirmation(path, text)) {
    const allowed = safety.confirm(path, text!, ctx.confirm, ctx.modalAsked);
    if (allowed === null) return null;
    if (!allowed)
      return forbidden(
        userDenied(`The user denied a destructive '${path}' action via the on-device confirmation modal. (Text inspected: "${text ?? '?'}")`),
      );
  }
  // :666-670 an accepted timed command keeps screen access alive; permanent ones never do.
  if (grant && grant !== 'exempt' && CAPABILITIES[grant]) safety.refreshTimed();
  return appRoute(cmd.method, path, b, ctx);
}

/** extractDestructiveVerbText (BridgeCommandHandler.kt:2117-2160): the text, or the tapped node's text or description. */
function destructiveText(path: string, b: Body, phone: FakePhone): string | null {
  if (path === '/tap_text' || path === '/type') return typeof b.text === 'string' ? b.text : null;
  if (path !== '/tap' && path !== '/long_press') return null;
  const id = b.nodeId ?? b.node_id;
  return typeof id === 'string' && id.trim() ? nodeText(phone, id) : null;
}
