import { createHash } from 'node:crypto';
import type { SimAnswer } from './bridge-command';
import { bool, content, fail, int, ok, userDenied, type AppContext, type Body } from './app-context';
import { share, uploadScreenshot } from './app-media';
import { APPS, CONTACTS, type FakePhone, type ScreenNode } from './fake-phone';

/*
 * What each route of the app answers once its dispatcher's gates let a command through
 * (network/relay/BridgeCommandHandler.kt:724-1721, accessibility/ActionExecutor.kt, accessibility/ScreenReader.kt;
 * paths under app/src/main/kotlin/com/hermesandroid/relay/). A success is 200 with the executor's data, a
 * failure 400 `{error, ...}` (respondFromResult, BridgeCommandHandler.kt:2037-2068).
 */

type Bounds = ScreenNode['bounds'];
type AppNode = Omit<ScreenNode, 'nodeId'> & { nodeId: string };

const SELF = 'com.hermesandroid.relay';
const ZERO: Bounds = { left: 0, top: 0, right: 0, bottom: 0 };
const empty = (b: Bounds) => b.right - b.left <= 0 || b.bottom - b.top <= 0;
const centre = (b: Bounds) => ({ x: Math.trunc((b.left + b.right) / 2), y: Math.trunc((b.top + b.bottom) / 2) });

/**
 * The screen as ScreenReader.readAllWindows walks it (:180-320): only nodes with text, a description or an action
 * and non-empty bounds are listed, numbered `w<window>:<n>`; with include_bounds false their bounds are zeroed
 * first, so none is (the relay asks with bounds for that reason: docs/PROTOCOL.md, "The app's wire").
 */
export function appNodes(phone: FakePhone, includeBounds = true): AppNode[] {
  const out: AppNode[] = [];
  for (const n of phone.screenNodes()) {
    const bounds = includeBounds ? n.bounds : ZERO;
    const interesting = (n.text || n.contentDescription || n.clickable || n.longClickable || n.scrollable || n.editable) && !empty(bounds);
    if (interesting) out.push({ ...n, bounds, nodeId: `w0:${out.length}` });
  }
  return out;
}

/** The text (else description) of a node by its id, as extractDestructiveVerbText reads it (BridgeCommandHandler.kt:2117-2160). */
export function nodeText(phone: FakePhone, id: string): string | null {
  const n = appNodes(phone).find((x) => x.nodeId === id);
  return n ? n.text?.trim() || n.contentDescription?.trim() || null : null;
}

const ROOT = (phone: FakePhone): Bounds => phone.screen().rootBounds as Bounds;
const hash = (nodes: AppNode[]) =>
  createHash('sha256')
    .update(nodes.map((n) => [n.nodeId, n.className, n.text, n.contentDescription, n.viewId].join('|')).join('\n'))
    .digest('hex');

/** ActionExecutor.kt:1158-1246: the last fix, 30 s old. */
const location = (now: number) => ({
  latitude: 51.5007,
  longitude: -0.1246,
  accuracy: 12,
  provider: 'fused',
  timestamp: now - 30_000,
  staleness_ms: 30_000,
});

const KEYS = new Set(['home', 'back', 'recents', 'recent_apps', 'overview', 'notifications', 'quick_settings', 'power_dialog', 'lock_screen']);
const KEYCODES: Record<string, number> = { play: 126, pause: 127, toggle: 85, next: 87, previous: 88 };
const EVENT_NAMES: Record<string, [string, string]> = {
  view_clicked: ['click', 'TYPE_VIEW_CLICKED'],
  view_text_changed: ['text_changed', 'TYPE_VIEW_TEXT_CHANGED'],
  view_scrolled: ['scroll', 'TYPE_VIEW_SCROLLED'],
  window_state_changed: ['window_state_changed', 'TYPE_WINDOW_STATE_CHANGED'],
};

export async function appRoute(method: string, path: string, b: Body, ctx: AppContext): Promise<SimAnswer | null> {
  const { phone, safety } = ctx;
  const s = phone.state;
  const tap = (x: number, y: number, duration: number): SimAnswer => {
    if (x < 0 || y < 0) return fail(`tap coordinates must be non-negative (got x=${x}, y=${y})`);
    if (phone.apps) phone.tapAt(x, y);
    else phone.event('view_clicked', null);
    return ok({ x, y, duration_ms: duration });
  };
  const swipe = (sx: number, sy: number, ex: number, ey: number, d: number): SimAnswer =>
    d <= 0 ? fail(`swipe duration must be positive (got ${d})`) : ok({ start_x: sx, start_y: sy, end_x: ex, end_y: ey, duration_ms: d });
  const node = (id: unknown) => appNodes(phone).find((n) => n.nodeId === content(id));
  switch (path) {
    case '/events': {
      // EventStore.kt:116-133, 184-200: kept only while streaming, newest `limit` after `since`.
      const limit = Math.min(Math.max(int(b.limit) ?? 50, 1), 500);
      const since = int(b.since) ?? 0;
      const entries = (s.eventsStreaming ? phone.events : [])
        .map((e) => ({ e, timestamp: Math.round(e.ts * 1000) }))
        .filter(({ timestamp }) => since <= 0 || timestamp > since)
        .slice(-limit)
        .map(({ e, timestamp }) => {
          const [eventType, source] = EVENT_NAMES[e.type] ?? [e.type, 'TYPE_UNKNOWN'];
          return { timestamp, event_type: eventType, package_name: e.package, ...(e.text !== null ? { text: e.text } : {}), source };
        });
      return ok({ entries, count: entries.length, streaming: s.eventsStreaming });
    }
    case '/current_app':
      return ok({ package: s.currentApp || 'unknown' });
    case '/get_apps':
    case '/apps':
      return ok({ apps: APPS, count: APPS.length });
    case '/open_app': {
      const pkg = content(b.package) ?? '';
      if (!pkg.trim()) return fail("missing 'package' in body");
      if (!safety.packageAllowed(pkg)) return { status: 403, result: { error: `blocked package ${pkg}` } };
      if (!APPS.some((a) => a.package === pkg) && pkg !== SELF) return { status: 404, result: { error: `no launch intent for package '${pkg}'` } };
      phone.setForeground(pkg);
      return ok({ ok: true, package: pkg });
    }
    case '/return_to_hermes':
      if (s.currentApp === SELF) return ok({ ok: true, package: SELF, note: 'already foreground' });
      phone.setForeground(SELF);
      return ok({ ok: true, package: SELF });
    case '/events/stream': {
      const enabled = bool(b.enabled);
      if (enabled === null) return fail("missing or invalid 'enabled' (must be boolean) in body");
      if (enabled !== s.eventsStreaming) phone.events.splice(0);
      s.eventsStreaming = enabled;
      return ok({ streaming: enabled, buffer_cleared: true });
    }
    case '/tap': {
      const id = content(b.nodeId)?.trim();
      const duration = int(b.duration_ms) ?? 100;
      if (id) {
        const n = node(id);
        if (!n) return { status: 404, result: { error: `node not resolvable: ${id}` } };
        if (empty(n.bounds)) return fail(`node '${id}' has empty bounds (off-screen?)`);
        const c = centre(n.bounds);
        return tap(c.x, c.y, duration);
      }
      const [x, y] = [int(b.x), int(b.y)];
      return x === null || y === null ? fail("missing 'x' or 'y' in body") : tap(x, y, duration);
    }
    case '/tap_text': {
      const needle = content(b.text) ?? '';
      if (!needle.trim()) return fail("missing 'text' in body");
      // ActionExecutor.kt:218-330: the first node whose text or description holds it; itself or an ancestor clicked, else its centre.
      const lowered = needle.toLowerCase();
      const hit = phone.screenNodes().find((n) => n.text?.toLowerCase().includes(lowered) || n.contentDescription?.toLowerCase().includes(lowered));
      if (!hit) return fail(`no node found matching text: ${needle}`);
      const c = centre(hit.bounds);
      if (phone.apps) phone.tapAt(c.x, c.y);
      else phone.event('view_clicked', hit.text);
      if (hit.clickable) return ok({ ok: true, via: 'direct click', message: 'tapped via direct click', depth: 0, needle });
      return ok({ ok: true, via: 'coordinate fallback', message: `tapped via coordinate fallback at (${c.x}, ${c.y})`, x: c.x, y: c.y, needle });
    }
    case '/long_press': {
      const [x, y] = [int(b.x), int(b.y)];
      const id = content(b.node_id) ?? content(b.nodeId);
      const duration = int(b.duration) ?? int(b.duration_ms) ?? 500;
      const coords = x !== null && y !== null;
      if (!coords && !id?.trim()) return fail('long_press requires either (x, y) or node_id');
      if (coords && id?.trim()) return fail('long_press accepts (x, y) OR node_id, not both');
      if (duration < 100 || duration > 3000) return fail(`long_press duration must be 100..3000 ms (got ${duration})`);
      if (id?.trim()) {
        const n = node(id);
        if (!n) return fail(`no node matching node_id '${id}' on screen`);
        return n.longClickable
          ? ok({ node_id: id, mode: 'action_long_click' })
          : fail(`ACTION_LONG_CLICK refused by node '${id}' (node may not be long-clickable)`);
      }
      if (x! < 0 || y! < 0) return fail(`long_press coordinates must be non-negative (got x=${x}, y=${y})`);
      return ok({ x, y, duration_ms: duration, mode: 'gesture' });
    }
    case '/type': {
      const text = content(b.text) ?? '';
      if (text === '') return fail("missing 'text' in body");
      // ActionExecutor.kt:643-690: ACTION_SET_TEXT on the focused field replaces its text.
      s.focusedText = text;
      phone.typed(text);
      phone.event('view_text_changed', null);
      return ok({ length: text.length });
    }
    case '/swipe':
    case '/drag': {
      const [sx, sy, ex, ey] = [b.start_x, b.start_y, b.end_x, b.end_y].map(int);
      if (sx === null || sy === null || ex === null || ey === null) return fail(`${path.slice(1)} requires start_x, start_y, end_x, end_y`);
      if (path === '/swipe') return swipe(sx, sy, ex, ey, int(b.duration_ms) ?? 400);
      if ([sx, sy, ex, ey].some((v) => v < 0)) return fail(`drag coordinates must be non-negative (got start=(${sx},${sy}) end=(${ex},${ey}))`);
      return ok({ start_x: sx, start_y: sy, end_x: ex, end_y: ey, duration_ms: Math.min(Math.max(int(b.duration_ms) ?? 500, 100), 3000) });
    }
    case '/scroll': {
      // ActionExecutor.kt:709-750: a quarter of the root (or of the node's centre) each way, as a swipe.
      const direction = (content(b.direction) ?? '').toLowerCase();
      const root = ROOT(phone);
      let c = centre(root);
      const id = content(b.nodeId)?.trim();
      if (id) {
        const n = node(id);
        if (!n) return { status: 404, result: { error: `node not resolvable: ${id}` } };
        c = centre(n.bounds);
      }
      const [qx, qy] = [Math.trunc((root.right - root.left) / 4), Math.trunc((root.bottom - root.top) / 4)];
      const moves: Record<string, [number, number, number, number]> = {
        up: [c.x, c.y - qy, c.x, c.y + qy],
        down: [c.x, c.y + qy, c.x, c.y - qy],
        left: [c.x - qx, c.y, c.x + qx, c.y],
        right: [c.x + qx, c.y, c.x - qx, c.y],
      };
      const m = moves[direction];
      if (!m) return fail(`scroll direction must be one of up/down/left/right (got '${content(b.direction) ?? ''}')`);
      phone.event('view_scrolled', null);
      return swipe(...m, 400);
    }
    case '/describe_node': {
      const id = content(b.nodeId) ?? content(b.node_id);
      if (!id?.trim()) return fail("missing 'nodeId' in body");
      const n = node(id);
      if (!n) return { status: 404, result: { error: `node not found: ${id}` } };
      const c = centre(n.bounds);
      // ScreenReader.kt:739-797.
      return ok({
        nodeId: id,
        bounds: { ...n.bounds, centerX: c.x, centerY: c.y, width: n.bounds.right - n.bounds.left, height: n.bounds.bottom - n.bounds.top },
        className: n.className || null,
        text: n.text || null,
        contentDescription: n.contentDescription || null,
        hintText: null,
        viewIdResourceName: n.viewId || null,
        childCount: 0,
        clickable: n.clickable,
        longClickable: n.longClickable,
        focusable: n.clickable || n.editable,
        focused: n.focused,
        editable: n.editable,
        scrollable: n.scrollable,
        checkable: false,
        checked: null,
        enabled: n.enabled,
        selected: n.selected,
        password: false,
      });
    }
    case '/press_key': {
      const key = content(b.key) ?? '';
      if (!key.trim()) return fail("missing 'key' in body");
      if (!KEYS.has(key.toLowerCase().trim()))
        return fail(`unsupported key '${key}' — supported: home, back, recents, notifications, quick_settings, power_dialog, lock_screen`);
      if (key.toLowerCase().trim() === 'home') phone.setForeground('com.android.launcher3');
      else phone.pressKey(key.toLowerCase().trim());
      return ok({ key });
    }
    case '/wait': {
      const ms = Math.min(Math.max(int(b.ms) ?? 0, 0), 15_000, ctx.maxWaitMs ?? 15_000);
      await new Promise((r) => setTimeout(r, ms));
      return ok({ slept_ms: ms });
    }
    case '/clipboard': {
      if (method.toUpperCase() === 'GET') return ok({ text: s.clipboard });
      const text = content(b.text);
      if (text === null) return fail("missing 'text' in body");
      s.clipboard = text;
      return ok({ success: true, length: text.length });
    }
    case '/media': {
      const action = content(b.action) ?? '';
      if (!action.trim()) return fail("missing 'action' in body");
      const keycode = KEYCODES[action.toLowerCase().trim()];
      return keycode === undefined ? fail(`Unknown media action: ${action}`) : ok({ action, keycode });
    }
    case '/location':
      return ok(location(ctx.now()));
    case '/search_contacts': {
      const query = content(b.query) ?? '';
      if (!query.trim()) return fail("missing 'query' in body");
      const limit = int(b.limit) ?? 20;
      const contacts = CONTACTS.map((c, i) => ({ id: i + 1, name: c.name, phones: [{ number: c.phone, type: 'mobile', label: 'Mobile' }] }))
        .filter((c) => c.name.toLowerCase().includes(query.toLowerCase()))
        .slice(0, Math.max(limit, 0));
      return ok({ count: contacts.length, query, contacts });
    }
    case '/call': {
      const number = content(b.number) ?? '';
      if (!number.trim()) return fail("missing 'number' in body");
      const allowed = safety.confirm('/call', `Call ${number}?`, ctx.confirm, ctx.modalAsked);
      if (allowed === null) return null;
      if (!allowed) return { status: 403, result: userDenied(`The user denied the call to ${number} via the on-device confirmation modal.`) };
      if (!/^[+0-9*#(). -]+$/.test(number)) return fail('call: number contains invalid characters');
      return ok({ number, mode: 'auto_dial' });
    }
    case '/send_sms': {
      const to = content(b.to) ?? '';
      const body = content(b.body) ?? '';
      if (!to.trim() || body === '')
        return fail("missing 'to' or 'body' in body", {
          status: 'failed',
          reason: 'invalid_schema',
          expected_schema: '{ "to": "<phone>", "body": "<text>" }',
        });
      const allowed = safety.confirm('/send_sms', `Send '${body}' to ${to}?`, ctx.confirm, ctx.modalAsked);
      if (allowed === null) return null;
      if (!allowed) return { status: 403, result: userDenied(`The user denied the SMS to ${to} via the on-device confirmation modal.`) };
      const parts = body.length <= 160 ? 1 : Math.ceil(body.length / 153);
      return ok({ status: 'sent', android_result: 'RESULT_OK', to, length: body.length, parts, summary: `SMS sent to ${to} (${parts} part(s))` });
    }
    case '/share_media':
    case '/send_mms':
      return share(path, b, ctx);
    case '/screen': {
      const includeBounds = bool(b.include_bounds) ?? true;
      const nodes = appNodes(phone, includeBounds);
      return ok({ packageName: s.currentApp, rootBounds: ROOT(phone), nodes, truncated: false, nodeCount: nodes.length });
    }
    case '/find_nodes': {
      // ScreenReader.kt:348-470: all filters ANDed; text matches text or description, class exactly.
      const text = content(b.text)?.trim() ? content(b.text)!.toLowerCase() : null;
      const cls = content(b.class_name)?.trim() ? content(b.class_name) : null;
      const clickable = bool(b.clickable);
      const limit = Math.min(Math.max(int(b.limit) ?? 20, 1), 512);
      const matches = appNodes(phone)
        .filter(
          (n) =>
            (text === null || !!n.text?.toLowerCase().includes(text) || !!n.contentDescription?.toLowerCase().includes(text)) &&
            (cls === null || n.className === cls) &&
            (clickable === null || n.clickable === clickable),
        )
        .slice(0, limit);
      return ok({ matches, count: matches.length });
    }
    case '/screen_hash': {
      const nodes = appNodes(phone);
      return ok({ hash: hash(nodes), node_count: nodes.length, truncated: false });
    }
    case '/diff_screen': {
      const previous = content(b.previous_hash) ?? '';
      if (!previous.trim()) return fail("missing 'previous_hash' in body");
      const nodes = appNodes(phone);
      const h = hash(nodes);
      return ok({ changed: h !== previous, hash: h, node_count: nodes.length, truncated: false });
    }
    case '/screenshot':
      try {
        return ok({ media: `MEDIA:hermes-relay://${await uploadScreenshot(ctx.relayUrl, ctx.token, phone.screenshot(), ctx.now())}` });
      } catch (err) {
        return { status: 500, result: { error: (err as Error).message || 'screenshot failed' } };
      }
    case '/send_intent':
    case '/broadcast': {
      const action = content(b.action) ?? '';
      if (!action.trim()) return fail("missing 'action' in body");
      const pkg = content(b.package);
      if (!safety.packageAllowed(pkg)) return { status: 403, result: { error: `blocked package ${pkg ?? 'unknown'}` } };
      const data = content(b.data) ?? '';
      if (path === '/broadcast') return ok({ action, package: pkg ?? '', data });
      const component = content(b.component);
      if (component && !/^[^/]+\/[^/]+$/.test(component)) return fail(`send_intent: invalid component '${component}' (expected 'pkg/classname')`);
      return ok({ action, package: pkg ?? '', component: component ?? '', data });
    }
    default:
      return { status: 404, result: { error: `unknown bridge path '${path}'` } };
  }
}
