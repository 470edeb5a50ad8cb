import type { SimAnswer, SimCommand } from './bridge-command';
import { APPS, CONTACTS, type FakePhone, type PhoneState, type ScreenNode } from './fake-phone';

/**
 * The `legacy` mode (the default): a phone that answers the relay's `bridge.confirm` and switches itself off on
 * `bridge.master_disabled` (it says both in `system/auth`), reports a flat `bridge.status`, and sends screenshots
 * inline as `png_base64`.
 */
export const LEGACY_SUPPORTS = { bridge_confirm: true, bridge_master_disabled: true };

export function legacyStatus(s: PhoneState): Record<string, unknown> {
  return {
    screen_on: s.screenOn,
    battery: s.battery,
    current_app: s.currentApp,
    accessibility_enabled: true,
    master_enabled: s.masterEnabled,
    device_control_supported: s.deviceControlSupported,
    trusted_destructive_verbs: s.trustedVerbs,
    ...(s.autoDisableMinutes === null ? {} : { auto_disable_minutes: s.autoDisableMinutes }),
  };
}

/** The built-in answers: a small, consistent phone. `maxWaitMs` bounds a real `/wait` sleep (default 15000). */
export async function legacyAnswer(cmd: SimCommand, phone: FakePhone, maxWaitMs?: number): Promise<SimAnswer> {
  const b = cmd.body ?? {};
  const ok = (result: Record<string, unknown> = {}): SimAnswer => ({ status: 200, result: { ok: true, ...result } });
  let cached: ScreenNode[] | null = null;
  const screenNodes = (): ScreenNode[] => (cached ??= phone.screenNodes());
  switch (cmd.path) {
    case '/ping':
      return ok({ pong: true, ts: Date.now() / 1000 });
    case '/setup':
      return ok({ message: 'Device Control is ready', sideload: phone.state.deviceControlSupported });
    case '/current_app':
      return ok({ package: phone.state.currentApp });
    case '/screen':
      return { status: 200, result: phone.screen(cmd.params?.include_bounds !== false) };
    case '/screen_hash':
      return ok({ hash: phone.screenHash() });
    case '/diff_screen': {
      const hash = phone.screenHash();
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
        ? ok({ node: { ...n, packageName: phone.state.currentApp, childCount: 0, drawingOrder: 1 } })
        : { status: 404, result: { ok: false, error: `no node ${String(b.nodeId)}` } };
    }
    case '/screenshot': {
      const { width, height } = phone.shotSize;
      return { status: 200, result: { png_base64: phone.screenshot().toString('base64'), width, height } };
    }
    case '/get_apps':
      return ok({ apps: APPS });
    case '/tap':
      phone.event('view_clicked', null);
      return ok(b.nodeId !== undefined ? { tapped: { nodeId: b.nodeId } } : { tapped: { x: b.x, y: b.y } });
    case '/tap_text': {
      const text = String(b.text).toLowerCase();
      const nodes = screenNodes();
      const n =
        nodes.find((x) => (x.text ?? '').toLowerCase() === text) ??
        (b.exact ? undefined : nodes.find((x) => (x.text ?? '').toLowerCase().includes(text)));
      if (!n) return { status: 404, result: { ok: false, error: 'no node with that text on screen' } };
      phone.event('view_clicked', n.text);
      return ok({ tapped: { nodeId: n.nodeId, text: n.text } });
    }
    case '/long_press':
    case '/drag':
    case '/swipe':
      return ok({ performed: cmd.path.slice(1) });
    case '/scroll':
      phone.event('view_scrolled', null);
      return ok({ scrolled: b.direction });
    case '/type':
      phone.state.focusedText = (b.clearFirst ? '' : phone.state.focusedText) + String(b.text ?? '');
      phone.event('view_text_changed', null);
      return ok({ typed_chars: String(b.text ?? '').length });
    case '/press_key':
      if (b.key === 'home') phone.setForeground('com.android.launcher3');
      return ok({ key: b.key });
    case '/wait': {
      const ms = Math.min(Number(b.timeoutMs ?? b.ms) || 0, maxWaitMs ?? 15_000);
      const present = typeof b.text === 'string' && screenNodes().some((n) => (n.text ?? '').includes(String(b.text)));
      if (!present) await new Promise((r) => setTimeout(r, ms));
      return ok({ found: present, waited_ms: present ? 0 : ms });
    }
    case '/open_app':
      phone.setForeground(String(b.package));
      return ok({ package: b.package, launched: true });
    case '/clipboard':
      if (cmd.method === 'POST') {
        phone.state.clipboard = String(b.text ?? '');
        return ok({ set: true });
      }
      return ok({ text: phone.state.clipboard });
    case '/media':
      return ok({ action: b.action });
    case '/send_intent':
    case '/broadcast':
      return ok({ action: b.action, delivered: true });
    case '/events': {
      const since = Number(cmd.params?.since ?? 0);
      const limit = Number(cmd.params?.limit ?? 50);
      const events = phone.events.filter((e) => e.seq > since).slice(-limit);
      return ok({ events, streaming: phone.state.eventsStreaming, next_since: phone.eventSeq });
    }
    case '/events/stream':
      phone.state.eventsStreaming = b.enabled === true;
      return ok({ enabled: phone.state.eventsStreaming });
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
      phone.setForeground('com.svc.app');
      return ok({ foreground: 'com.svc.app' });
    default:
      return { status: 404, result: { ok: false, error: `phone-sim does not know ${cmd.path}` } };
  }
}
