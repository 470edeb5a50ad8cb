import { DEFAULT_ROUTE_VERBS, destructiveText, routeSpec, type ClientNames } from '@svc/domain';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

/** How a tool's answer is shown to the agent (mcp-results.ts). */
export type ResultShape = 'json' | 'screen' | 'nodes' | 'screenshot' | 'tree' | 'wait';

/** One MCP tool: a Device Control route and method, named as the host's agent tools name it. */
export type ToolRoute = { name: string; method: 'GET' | 'POST'; path: string; shape: ResultShape; description: string };

const IMAGE_SPACE =
  ' Coordinates are pixels of the last android_screenshot this MCP session took of this phone (the relay maps them back to the phone’s pixels;' +
  ' a point outside that image is refused); coordinates: "phone" gives phone pixels instead (as android_read_screen’s bounds are). With no screenshot yet, they are phone pixels.';

const TARGET =
  ' Or name the element instead: ref (from android_ui_tree) or query {text, role, exact}; the relay reads the screen, finds that one element on it now (a stale ref, no match or several matches is an error saying what to do) and acts on it.';

const DEVICE =
  ' Optional `device` (a device_id, token prefix of 4+ characters, or device name) picks the phone; without it the active phone, else the only one.' +
  ' From another machine than the relay’s, a session drives only its own phone.';

/**
 * Every Device Control route of spec 4.9 as a tool (`/clipboard` as read and write; `/apps` is the alias
 * of `/get_apps`, and `/return_to_svc` is one tool spelled as the relay's clients spell it). Names follow the
 * host plugin's `android_*` tools (plugin/tools/android_tool.py); inputs are the routes' own DTOs
 * (mcp-tool-set.ts). A unit test holds this table to the route table.
 */
export function toolRoutes(names: ClientNames): ToolRoute[] {
  const app = names.brand === 'hermes' ? 'Hermes' : 'svc';
  const t = (name: string, method: 'GET' | 'POST', path: string, description: string, shape: ResultShape = 'json'): ToolRoute => ({
    name,
    method,
    path,
    shape,
    description: description + DEVICE,
  });
  return [
    t(
      'android_ping',
      'GET',
      '/ping',
      'Check that the phone is reachable through the relay. Call this first; it works even while Device Control is switched off on the phone.',
    ),
    t('android_setup', 'POST', '/setup', 'Send the phone its one-shot welcome ping (the app confirms the bridge works end to end).'),
    t(
      'android_current_app',
      'GET',
      '/current_app',
      'The package (and activity, if known) of the app in the foreground. Works while Device Control is switched off.',
    ),
    t(
      'android_read_screen',
      'GET',
      '/screen',
      'Read the current screen as its accessibility tree: one line per node an agent can use (node id in brackets, class, text, content description, and flags such as clickable or editable). Use node ids with android_tap / android_describe_node. include_bounds adds pixel bounds.',
      'screen',
    ),
    t(
      'android_ui_tree',
      'GET',
      '/screen',
      'Read the current screen as an element tree for acting on: one line per element, indented by nesting, [ref] role "text" (description) ~"texts inside" #id flags @bounds (phone pixels). A ref names the same element across reads while it keeps its class, id and text (and its containers theirs); pass it as ref to android_tap, android_long_press, android_type or android_wait_for. Also as structuredContent. max_elements cuts a big screen (off-screen elements first).',
      'tree',
    ),
    t(
      'android_wait_for',
      'GET',
      '/screen',
      'Wait until an element is on the screen (ref, query {text, role, exact} or text), or with gone: true until it is not, polling every poll_ms (default 500) up to timeout_ms (default 10000; the relay has a maximum). Returns the element with its ref, or a timeout error.',
      'wait',
    ),
    t(
      'android_screen_hash',
      'GET',
      '/screen_hash',
      'A cheap SHA-256 fingerprint of the screen, for change detection (pass it to android_diff_screen later).',
    ),
    t(
      'android_diff_screen',
      'POST',
      '/diff_screen',
      'Compare the screen with a previous_hash from android_screen_hash: says whether it changed, and the new hash.',
    ),
    t(
      'android_find_nodes',
      'POST',
      '/find_nodes',
      'Find nodes on the screen without reading all of it: text (case-insensitive substring of text or description), class_name (exact), resource_id, clickable; up to limit matches, shown as android_read_screen shows nodes.',
      'nodes',
    ),
    t(
      'android_describe_node',
      'POST',
      '/describe_node',
      'Every property of one node (nodeId from android_read_screen): bounds, class, text, hint, resource id, state flags.',
    ),
    t(
      'android_screenshot',
      'GET',
      '/screenshot',
      'Take a screenshot of the phone, scaled so its long side is at most max_side px (default the relay’s setting, 2000) and encoded as format (jpeg, the default; webp; or png) at quality (1-100, default 80; png ignores it). The result says width, height, the phone’s own phone_width and phone_height, and scale (image px per phone px). android_tap, android_long_press, android_swipe and android_drag then take x/y in THIS image’s pixels on this phone (the last screenshot of this MCP session) and the relay maps them to the phone’s. The text also gives its relay media token (full size, valid for a while; share it with android_share_media). Prefer android_read_screen when text suffices.',
      'screenshot',
    ),
    t('android_get_apps', 'GET', '/get_apps', 'List the launchable apps on the phone with their package names (for android_open_app).'),
    t(
      'android_tap',
      'POST',
      '/tap',
      'Tap a node (nodeId, preferred) or a point (x, y). Give the label you expect in text or hint: a destructive word there (send, pay, delete...) is confirmed with the phone’s user first.' +
        TARGET +
        ' The element’s text counts as the label.' +
        IMAGE_SPACE,
    ),
    t(
      'android_tap_text',
      'POST',
      '/tap_text',
      'Tap the first element showing this text (exact: true for a whole-text match). Destructive words (send, pay, delete, transfer, confirm, buy...) are confirmed with the phone’s user first.',
    ),
    t(
      'android_long_press',
      'POST',
      '/long_press',
      'Long-press a node (node_id or nodeId) or a point (x, y); duration in ms (default 500).' + TARGET + IMAGE_SPACE,
    ),
    t('android_drag', 'POST', '/drag', 'Drag from (start_x, start_y) to (end_x, end_y) over duration_ms.' + IMAGE_SPACE),
    t(
      'android_type',
      'POST',
      '/type',
      'Type text into the focused field (tap it first); clearFirst replaces what is there. Text with a destructive word is confirmed with the phone’s user first.' +
        TARGET +
        ' The field is tapped (focused) first, then typed into.',
    ),
    t(
      'android_swipe',
      'POST',
      '/swipe',
      'Swipe up, down, left or right (distance short, medium, long or pixels), or from start_x/start_y to end_x/end_y.' + IMAGE_SPACE,
    ),
    t('android_scroll', 'POST', '/scroll', 'Scroll the screen, or the scrollable node nodeId: up, down, left, right, forward or backward.'),
    t(
      'android_press_key',
      'POST',
      '/press_key',
      'Press a global key: back, home, recents, notifications, quick_settings, lock_screen, take_screenshot... (no raw key events).',
    ),
    t(
      'android_wait',
      'POST',
      '/wait',
      'Wait up to 15 s (ms or timeoutMs), e.g. after an action that loads; text / className are passed to the phone as what to wait for.',
    ),
    t(
      'android_open_app',
      'POST',
      '/open_app',
      'Launch an app by package name (see android_get_apps). Banking, payment, password-manager and 2FA apps are on the relay’s blocklist and refused.',
    ),
    t('android_clipboard_read', 'GET', '/clipboard', 'Read the phone’s clipboard as text (Android shows the user a toast).'),
    t('android_clipboard_write', 'POST', '/clipboard', 'Put text on the phone’s clipboard (Android shows the user a toast).'),
    t('android_media', 'POST', '/media', 'Control media playback: play, pause, toggle, next, previous, volume_up, volume_down.'),
    t(
      'android_send_intent',
      'POST',
      '/send_intent',
      'Launch an activity with a raw intent (action, data URI, package or component pkg/Class, category, string extras): maps directions, dialer, deep links. The intent must name its app (package or component; find packages with android_get_apps): one naming none is refused, since the relay cannot tell which app Android would pick. Blocklisted packages are refused.',
    ),
    t(
      'android_broadcast',
      'POST',
      '/broadcast',
      'Send a broadcast intent (action, data, package, string extras). The broadcast must name its app (package): one naming none is refused, since the relay cannot tell which apps receive it (media keys: android_media). Blocklisted packages are refused.',
    ),
    t(
      'android_events',
      'GET',
      '/events',
      'Poll recent accessibility events (clicks, text changes, window changes): limit (1-500), since (epoch ms). Capture must be on (android_event_stream).',
    ),
    t(
      'android_event_stream',
      'POST',
      '/events/stream',
      'Turn accessibility event capture on or off (enabled). Privacy-sensitive: say so to the user before turning it on.',
    ),
    t('android_location', 'GET', '/location', 'The phone’s last known location (sideload build of the app only).'),
    t(
      'android_search_contacts',
      'POST',
      '/search_contacts',
      'Search the phone’s contacts by name (query, limit): names and numbers (sideload build only).',
    ),
    t('android_call', 'POST', '/call', 'Place a call to number. Always confirmed with the phone’s user first (sideload build only).'),
    t(
      'android_send_sms',
      'POST',
      '/send_sms',
      'Send a text-only SMS (to, body). Always confirmed with the phone’s user first (sideload build only); attachments go through android_send_mms.',
    ),
    t(
      'android_share_media',
      'POST',
      '/share_media',
      'Share text and/or files through Android’s share sheet: attachments (each a relay media token or an absolute path on the relay’s host), text, title, package. The phone asks its user before sharing.',
    ),
    t(
      'android_send_mms',
      'POST',
      '/send_mms',
      'Open an MMS compose screen for the user to send: to, body, attachments (media tokens or host paths), package. The phone asks its user; nothing is sent silently.',
    ),
    t(
      `android_return_to_${names.brand}`,
      'POST',
      '/return_to_svc',
      `Bring the ${app} app back to the front after a task opened another app (the clean-up step). Works while Device Control is switched off.`,
    ),
  ];
}

/** A read changes nothing on the phone: the read routes, and every GET but the one that brings the app forward. */
export function isReadOnly(t: ToolRoute): boolean {
  return routeSpec(t.path)?.group === 'read' || (t.method === 'GET' && t.path !== '/return_to_svc');
}

/**
 * Tools the safety pipeline may stop for the user's confirmation (libs/domain safety.ts): routes destructive by
 * themselves (`/call`, `/send_sms`) and those whose text it reads for destructive words (`/tap`, `/tap_text`, `/type`).
 */
function isDestructive(t: ToolRoute): boolean {
  return t.method === 'POST' && (t.path in DEFAULT_ROUTE_VERBS || destructiveText(t.path, { text: 'x', hint: 'x' }) !== null);
}

/** Acts whose repetition leaves the phone as one call did: a setting set, an app brought forward, a wait. */
const IDEMPOTENT = new Set(['POST /clipboard', 'POST /events/stream', 'POST /open_app', 'POST /return_to_svc', 'POST /wait']);

/**
 * Tools that stay within the phone's own state and the relay's: what they read or change is no app's or person's
 * content. Every other tool reads a screen (any app's content, a web page, someone's message: untrusted input for
 * the agent) or acts into apps and on other people (calls, messages, shares, intents).
 */
const CLOSED_WORLD = new Set([
  'GET /ping',
  'POST /setup',
  'GET /current_app',
  'GET /screen_hash',
  'POST /diff_screen',
  'GET /get_apps',
  'POST /press_key',
  'POST /wait',
  'POST /clipboard',
  'POST /media',
  'POST /events/stream',
  'GET /location',
  'POST /return_to_svc',
]);

/** The four MCP hints of a tool (docs/PROTOCOL.md, MCP, has them as a table; mcp-tools.spec.ts holds them to it). */
export function annotationsOf(
  t: ToolRoute,
): Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>> {
  const key = `${t.method} ${t.path}`;
  const readOnly = isReadOnly(t);
  return {
    readOnlyHint: readOnly,
    destructiveHint: isDestructive(t),
    idempotentHint: readOnly || IDEMPOTENT.has(key),
    openWorldHint: !CLOSED_WORLD.has(key),
  };
}
