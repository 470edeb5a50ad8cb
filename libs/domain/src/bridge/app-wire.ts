import type { AutoDisableSide, BridgeStatus } from '@svc/events';
import { DomainError } from '../errors';
import { INPUT_TOKEN_SCHEMES, tokenMarker } from '../media/chat-markers';
import type { ClientNames } from '../spelling';
/**
 * What the real phone app sends and reads on the bridge channel, and how the relay translates between
 * the host tools' vocabulary and the app's (docs/PROTOCOL.md, "Device Control: the app's wire").
 * Pure: no I/O, no clock.
 */

/** A `bridge.status` payload, validated, in either shape (the app's nested one or the flat one). */
export type ParsedBridgeStatus = Omit<BridgeStatus, 'tokenPrefix' | 'connId' | 'deviceId' | 'deviceName' | 'autoDisableMinutes' | 'autoDisableAt'> & {
  /** null: the phone did not say (the relay keeps what it had). */
  autoDisableMinutes: number | null;
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/*
 * A `bridge.status` comes in two shapes. The app nests `master_enabled` / `device_control_supported` /
 * `accessibility_granted` under `bridge {}`, `auto_disable_minutes` under `safety {}`, and repeats
 * `screen_on` / `battery` / `current_app` / `accessibility_enabled` at the top level (and under
 * `device {}` as `battery_percent`). A nested value wins over a flat one. An unreadable battery
 * (the app sends -1) or current app (`"unknown"`) is "not known", never a reason to drop the status.
 * Read in three steps (the relay's BridgeStatusFrame states them as one DTO): each field's value is the
 * first of its places that holds one (reportedStatusValue), the groups and those values pass their rules
 * (statusGroupRule, statusFieldRule), then bridgeStatusOf reads what passed.
 */

/** The groups of the app's nested shape. */
export const BRIDGE_STATUS_GROUPS = ['bridge', 'safety', 'device'] as const;
export type BridgeStatusGroup = (typeof BRIDGE_STATUS_GROUPS)[number];

/** Where each field may be, first place first (`null`: the top level). */
const STATUS_PLACES = {
  screen_on: [
    ['device', 'screen_on'],
    [null, 'screen_on'],
  ],
  accessibility_enabled: [
    ['bridge', 'accessibility_granted'],
    ['bridge', 'accessibility_enabled'],
    [null, 'accessibility_enabled'],
  ],
  master_enabled: [
    ['bridge', 'master_enabled'],
    [null, 'master_enabled'],
  ],
  device_control_supported: [
    ['bridge', 'device_control_supported'],
    [null, 'device_control_supported'],
  ],
  battery: [
    ['device', 'battery_percent'],
    [null, 'battery'],
  ],
  current_app: [
    ['device', 'current_app'],
    [null, 'current_app'],
  ],
  trusted_destructive_verbs: [
    ['safety', 'trusted_destructive_verbs'],
    [null, 'trusted_destructive_verbs'],
  ],
  auto_disable_minutes: [
    ['safety', 'auto_disable_minutes'],
    [null, 'auto_disable_minutes'],
  ],
} as const satisfies Record<string, readonly (readonly [BridgeStatusGroup | null, string])[]>;
export type BridgeStatusField = keyof typeof STATUS_PLACES;

/** A `bridge.status`'s fields once their rules passed; absent: the phone did not say. */
export type BridgeStatusFields = {
  screen_on?: boolean;
  accessibility_enabled?: boolean;
  master_enabled?: boolean;
  device_control_supported?: boolean;
  battery?: number;
  current_app?: string;
  trusted_destructive_verbs?: string[];
  auto_disable_minutes?: number;
};

/** What a status says of `field`: the first of its places holding a value (not null), nested before flat; undefined: none. */
export function reportedStatusValue(p: Obj, field: BridgeStatusField): unknown {
  for (const [group, key] of STATUS_PLACES[field]) {
    const from = group === null ? p : p[group];
    const v = isObj(from) ? from[key] : undefined;
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}

const badStatus = (field: string, what: string) => new DomainError('bad_frame', 'invalid', `bridge.status: ${field} must be ${what}`);

/** A group of the nested shape: absent, null or an object. */
export function statusGroupRule(group: BridgeStatusGroup, value: unknown): void {
  if (value !== undefined && value !== null && !isObj(value)) throw badStatus(group, 'an object');
}

/** The rule of one field, given its reported value (undefined: not said, which always passes). */
export function statusFieldRule(field: BridgeStatusField, value: unknown, maxAutoDisableMinutes: number): void {
  if (value === undefined) return;
  switch (field) {
    case 'screen_on':
    case 'accessibility_enabled':
    case 'master_enabled':
    case 'device_control_supported':
      if (typeof value !== 'boolean') throw badStatus(field, 'a boolean');
      return;
    case 'battery':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw badStatus('battery', 'a number (0-100; -1: unknown)');
      return;
    case 'current_app':
      if (typeof value !== 'string' || value.length > 255) throw badStatus(field, 'a package id string');
      return;
    case 'trusted_destructive_verbs':
      if (!Array.isArray(value) || value.length > 64 || !value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 64))
        throw badStatus(field, 'an array of at most 64 verb strings');
      return;
    case 'auto_disable_minutes':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > maxAutoDisableMinutes)
        throw badStatus(field, `a number 0-${maxAutoDisableMinutes} (0: never)`);
      return;
    default: {
      const never: never = field;
      throw new Error(`no rule for ${String(never)}`);
    }
  }
}

/** The status a phone reported, from fields that passed their rules. */
export function bridgeStatusOf(f: BridgeStatusFields): ParsedBridgeStatus {
  const battery = f.battery;
  return {
    screenOn: f.screen_on ?? null,
    battery: battery !== undefined && battery >= 0 && battery <= 100 ? Math.round(battery) : null,
    currentApp: f.current_app !== undefined && f.current_app !== '' && f.current_app !== 'unknown' ? f.current_app : null,
    accessibilityEnabled: f.accessibility_enabled ?? null,
    // A phone that does not say is treated as switched off: Device Control is opt-in.
    masterEnabled: f.master_enabled === true,
    deviceControlSupported: f.device_control_supported === true,
    trustedVerbs: f.trusted_destructive_verbs ?? [],
    autoDisableMinutes: f.auto_disable_minutes ?? null,
  };
}

/**
 * Who shows the destructive-verb confirmation. The app runs its own modal and never answers
 * `bridge.confirm`; a phone that does answer it says so in `system/auth` `supports.bridge_confirm: true`.
 */
export type ConfirmationSide = 'phone' | 'relay';

export function confirmationSide(supports: Readonly<Record<string, unknown>> | null | undefined): ConfirmationSide {
  return supports?.bridge_confirm === true ? 'relay' : 'phone';
}

/**
 * Who switches Device Control off once it was idle, negotiated as the confirmation is. The app drops every
 * bridge frame but `bridge.command` (BridgeCommandHandler.kt:271-276) and keeps its own idle expiry
 * (BridgeSafetyManager.kt:420-450), so a relay deadline would only refuse it until its next status tick said
 * "on" again; a phone that honours `bridge.master_disabled` says so in `supports.bridge_master_disabled: true`.
 */
export function autoDisableSide(supports: Readonly<Record<string, unknown>> | null | undefined): AutoDisableSide {
  return supports?.bridge_master_disabled === true ? 'relay' : 'phone';
}

/** The phone's answer to a command it confirmed itself, read as the user's decision. */
export function phoneDecision(status: number, body: Readonly<Obj>): 'allowed' | 'denied' | 'not_asked' {
  if (status >= 200 && status < 300) return 'allowed';
  if (body.error_code === 'user_denied' || body.android_result === 'user_denied' || body.code === 'user_denied') return 'denied';
  return 'not_asked';
}

export type ScreenSize = { width: number; height: number };
/** What the relay assumes until a `/screen` answer showed the phone's real root bounds. */
export const DEFAULT_SCREEN: ScreenSize = { width: 1080, height: 2400 };
const DISTANCE_FRACTION: Record<string, number> = { short: 0.25, medium: 0.5, long: 0.75 };

/**
 * A swipe by direction as the app's `/swipe` needs it (start and end coordinates). `up` moves the
 * finger up (the content scrolls down), centred on the screen; `distance` is short/medium/long
 * (a quarter, half, three quarters of the screen along the swipe) or pixels.
 */
export function swipeCoordinates(
  direction: string,
  distance: unknown,
  screen: ScreenSize,
): { start_x: number; start_y: number; end_x: number; end_y: number } {
  const vertical = direction === 'up' || direction === 'down';
  const span = vertical ? screen.height : screen.width;
  const raw = typeof distance === 'number' ? distance : span * (DISTANCE_FRACTION[String(distance ?? 'medium')] ?? 0.5);
  const d = Math.max(1, Math.min(Math.round(raw), span - 2));
  const cx = Math.round(screen.width / 2);
  const cy = Math.round(screen.height / 2);
  const half = Math.floor(d / 2);
  switch (direction) {
    case 'up':
      return { start_x: cx, start_y: cy + half, end_x: cx, end_y: cy - (d - half) };
    case 'down':
      return { start_x: cx, start_y: cy - half, end_x: cx, end_y: cy + (d - half) };
    case 'left':
      return { start_x: cx + half, start_y: cy, end_x: cx - (d - half), end_y: cy };
    default:
      return { start_x: cx - half, start_y: cy, end_x: cx + (d - half), end_y: cy };
  }
}

/** The screen size a `/screen` answer shows (`rootBounds`), if it shows a plausible one. */
export function screenSizeShown(body: Readonly<Obj>): ScreenSize | null {
  const b = body.rootBounds;
  if (!isObj(b)) return null;
  const [l, t, r, btm] = [b.left, b.top, b.right, b.bottom];
  if (![l, t, r, btm].every((v) => typeof v === 'number' && Number.isFinite(v))) return null;
  const width = (r as number) - (l as number);
  const height = (btm as number) - (t as number);
  return width >= 100 && height >= 100 && width <= 20_000 && height <= 20_000 ? { width, height } : null;
}

/** The return-to-app route is sent to the phone in the spelling in force (the public app has `POST /return_to_hermes`). */
const RETURN_PATHS: ReadonlySet<string> = new Set(['/return_to_svc', '/return_to_hermes']);

/**
 * The `bridge.command` the phone gets for one Device Control call. The app reads `body` and falls back
 * to `params` only when `body` is absent, so a GET's query goes in both. Fields that the two sides
 * name differently are sent under both names; nothing a client sent is dropped.
 */
export function toPhoneCommand(
  path: string,
  method: 'GET' | 'POST',
  params: Readonly<Obj>,
  body: Readonly<Obj>,
  screen: ScreenSize,
  names: ClientNames,
): { method: 'GET' | 'POST'; path: string; params: Obj; body: Obj } {
  const out: Obj = method === 'GET' ? { ...params, ...body } : { ...body };
  switch (path) {
    case '/wait':
      // android_tool.py sends timeoutMs; the app's /wait sleeps `ms`.
      if (out.ms === undefined && typeof out.timeoutMs === 'number') out.ms = out.timeoutMs;
      if (out.timeoutMs === undefined && typeof out.ms === 'number') out.timeoutMs = out.ms;
      break;
    case '/swipe':
      if (typeof out.direction === 'string' && out.start_x === undefined) Object.assign(out, swipeCoordinates(out.direction, out.distance, screen));
      break;
    case '/long_press':
      if (out.duration === undefined && typeof out.duration_ms === 'number') out.duration = out.duration_ms;
      break;
    case '/describe_node':
      if (out.node_id === undefined && out.nodeId !== undefined) out.node_id = out.nodeId;
      break;
    case '/screen':
      // The app zeroes the bounds before it picks the nodes worth listing, and a node with empty bounds never is
      // (ScreenReader.kt:256-274): asked without bounds it lists nothing. It is asked with them (screenAsAsked drops them).
      if (out.include_bounds === false) out.include_bounds = true;
      break;
    default:
      break;
  }
  // The app registers /return_to_hermes for POST only.
  if (RETURN_PATHS.has(path)) return { method: 'POST', path: names.returnPath, params: { ...params }, body: out };
  return { method, path, params: { ...params }, body: out };
}

/**
 * A `/screen` answer as its caller asked for it: asked without bounds (android_tool.py's default, whose docstring
 * promises bounds "if include_bounds=True"), the nodes come without them (the phone itself was asked with them).
 */
export function screenAsAsked(asked: Readonly<Obj>, body: Obj): Obj {
  if (asked.include_bounds !== false || !Array.isArray(body.nodes)) return body;
  return { ...body, nodes: body.nodes.map((n: unknown) => (isObj(n) ? Object.fromEntries(Object.entries(n).filter(([k]) => k !== 'bounds')) : n)) };
}

const MEDIA_TOKEN_RE = /^[A-Za-z0-9_-]{8,128}$/;

/**
 * The media token a marker names: `MEDIA:svc-relay://T`, `MEDIA:hermes-relay://T`, the same without
 * `MEDIA:`, or a bare token. null for anything else (a path marker, another scheme, junk).
 */
export function mediaTokenOf(marker: string): string | null {
  let s = marker.trim();
  if (s.startsWith('MEDIA:')) s = s.slice(6);
  for (const scheme of INPUT_TOKEN_SCHEMES) if (s.startsWith(scheme)) s = s.slice(scheme.length);
  return MEDIA_TOKEN_RE.test(s) ? s : null;
}

/** The marker the phone gets, in the spelling in force (the public app parses the `hermes-relay://` one only). */
export const phoneMediaMarker = (token: string, names: ClientNames): string => tokenMarker(token, names);
