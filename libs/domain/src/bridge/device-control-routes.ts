/**
 * The Device Control surface (spec 4.9): 34 routes, as the relay forwards them. Aliases are forwarded
 * under their canonical path so a phone implements each command once.
 */
export type RouteGroup = 'core' | 'read' | 'act' | 'events' | 'sideload';

export type RouteSpec = {
  /** Canonical path forwarded to the phone. */
  path: string;
  methods: readonly ('GET' | 'POST')[];
  group: RouteGroup;
  /** Passes the master toggle (spec 7: `/ping`, `/current_app`, `/return_to_svc`). */
  masterExempt: boolean;
  /**
   * Refused while a blocklisted app is in the foreground. Off for routes that only move away from the
   * foreground app or never touch it (ping, home/back keys, opening another app, returning to svc).
   */
  foregroundGate: boolean;
  /** A liveness probe: does not push the auto-disable deadline back. */
  probe: boolean;
};

const r = (
  path: string,
  methods: RouteSpec['methods'],
  group: RouteGroup,
  o: Partial<Omit<RouteSpec, 'path' | 'methods' | 'group'>> = {},
): RouteSpec => ({
  path,
  methods,
  group,
  masterExempt: o.masterExempt ?? false,
  foregroundGate: o.foregroundGate ?? true,
  probe: o.probe ?? false,
});

const G = ['GET'] as const;
const P = ['POST'] as const;

export const DEVICE_CONTROL_ROUTES: readonly RouteSpec[] = [
  r('/ping', G, 'core', { masterExempt: true, foregroundGate: false, probe: true }),
  r('/setup', P, 'core', { foregroundGate: false }),
  r('/current_app', G, 'core', { masterExempt: true, foregroundGate: false, probe: true }),
  r('/screen', G, 'read'),
  r('/screen_hash', G, 'read'),
  r('/diff_screen', P, 'read'),
  r('/find_nodes', P, 'read'),
  r('/describe_node', P, 'read'),
  r('/screenshot', G, 'read'),
  r('/get_apps', G, 'read', { foregroundGate: false }),
  r('/tap', P, 'act'),
  r('/tap_text', P, 'act'),
  r('/long_press', P, 'act'),
  r('/drag', P, 'act'),
  r('/type', P, 'act'),
  r('/swipe', P, 'act'),
  r('/scroll', P, 'act'),
  r('/press_key', P, 'act', { foregroundGate: false }),
  r('/wait', P, 'act'),
  r('/open_app', P, 'act', { foregroundGate: false }),
  r('/clipboard', ['GET', 'POST'], 'act'),
  r('/media', P, 'act', { foregroundGate: false }),
  r('/send_intent', P, 'act'),
  r('/broadcast', P, 'act'),
  r('/events', G, 'events'),
  r('/events/stream', P, 'events'),
  r('/location', G, 'sideload'),
  r('/search_contacts', P, 'sideload'),
  r('/call', P, 'sideload'),
  r('/send_sms', P, 'sideload'),
  r('/share_media', P, 'sideload'),
  r('/send_mms', P, 'sideload'),
  r('/return_to_svc', ['GET', 'POST'], 'core', { masterExempt: true, foregroundGate: false }),
];

/** Legacy and branded names, accepted and forwarded as their canonical path. */
export const ROUTE_ALIASES: Readonly<Record<string, string>> = {
  '/apps': '/get_apps',
  '/return_to_hermes': '/return_to_svc',
};

const BY_PATH = new Map(DEVICE_CONTROL_ROUTES.map((s) => [s.path, s]));

export function routeSpec(path: string): RouteSpec | undefined {
  return BY_PATH.get(ROUTE_ALIASES[path] ?? path);
}

export function canonicalPath(path: string): string {
  return ROUTE_ALIASES[path] ?? path;
}

/** Global actions `/press_key` accepts (accessibility global actions; never raw key events). */
export const PRESS_KEYS = [
  'back',
  'home',
  'recents',
  'recent_apps',
  'overview',
  'notifications',
  'quick_settings',
  'power_dialog',
  'lock_screen',
  'take_screenshot',
  'split_screen',
] as const;
/** android_tool.py offers play, pause, toggle, next, previous (the app's set); volume keys are ours. */
export const MEDIA_ACTIONS = ['play', 'pause', 'toggle', 'next', 'previous', 'volume_up', 'volume_down'] as const;
export const DIRECTIONS = ['up', 'down', 'left', 'right'] as const;
export const WAIT_CAP_MS = 15_000;
