import 'reflect-metadata';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { mcpConnect, textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

type El = {
  ref: string;
  role: string;
  label: string | null;
  text: string | null;
  id: string | null;
  node: string;
  on_screen: boolean;
  focused: boolean;
  enabled: boolean;
  bounds: { left: number; top: number; right: number; bottom: number };
};

/**
 * Accessibility first (issue 40, item 2), with the SDK's client over Streamable HTTP against the phone
 * simulator's app screens (apps/phone-sim/src/sim-screens.ts; the app's node fields, ScreenReader.kt:105-135):
 * the element tree and its refs, acting by ref and by query through the unchanged safety pipeline, waiting for
 * an element, and the refusals that tell the agent what to do.
 */
describe('MCP element tools', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  let client: Client;
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { mode: 'app', ui: 'apps', currentApp: 'com.google.android.apps.messaging', deliveryMs: 400 });
    ({ client } = await mcpConnect(relay, phone.token!));
  });
  afterAll(async () => {
    await client.close();
    phone.stop();
    await relay.close();
  });

  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const tree = async () => {
    const r = await call('android_ui_tree');
    expect(r.isError).toBeFalsy();
    return { r, els: (r.structuredContent as { elements: El[] }).elements };
  };
  const find = (els: El[], label: string) => els.find((e) => e.label === label)!;
  /** The bodies of the commands the phone received on this path, in order. */
  const sent = (path: string) =>
    phone.received.filter((f) => f.type === 'bridge.command' && f.payload.path === path).map((f) => f.payload.body as Record<string, unknown>);
  const code = (r: CallToolResult) => (r.structuredContent as { code?: string } | undefined)?.code;
  const home = async (pkg = 'com.google.android.apps.messaging') => {
    phone.phone.apps!.back();
    phone.phone.setForeground(pkg);
  };

  it('reads the screen as an element tree: refs, roles, labels, nesting, off-screen rows, layout nodes left out', async () => {
    const { r, els } = await tree();
    const text = textOf(r).split('\n');
    expect(text[0]).toBe(`com.google.android.apps.messaging: ${els.length} elements`);
    const row = find(els, 'Ada Lovelace, See you at 6');
    const list = els.find((e) => e.role === 'list')!;
    expect(row).toMatchObject({ role: 'group', text: null, clickable: true, parent: list.ref, depth: 1, id: 'conversation_row', on_screen: true });
    expect(text).toContain(`  [${row.ref}] group ~"Ada Lovelace, See you at 6" #conversation_row clickable longClickable @0,200-1080,460`);
    expect(text).toContain(`[${find(els, 'Search').ref}] button (Search) #action_search clickable @720,40-860,160`);
    expect(find(els, 'Neighbours')).toMatchObject({ on_screen: false });
    // The avatars (an image with no description) are not elements; every ref has the documented shape and is unique.
    expect(els.some((e) => e.role === 'image')).toBe(false);
    for (const e of els) expect(e.ref).toMatch(/^e[0-9a-v]{8}$/);
    expect(new Set(els.map((e) => e.ref)).size).toBe(els.length);
    expect(r.structuredContent).toMatchObject({ package: 'com.google.android.apps.messaging', total: els.length, shown: els.length, cut: false });
    // The same screen read again: the same refs.
    expect((await tree()).els.map((e) => e.ref)).toEqual(els.map((e) => e.ref));
    // Cut at max_elements, off-screen elements first, with a note.
    const cut = await call('android_ui_tree', { max_elements: 5 });
    expect(cut.structuredContent).toMatchObject({ shown: 5, cut: true });
    expect(textOf(cut)).toMatch(/more elements not shown: the limit is 5/);
  });

  it('keeps refs across an unrelated change, and refuses a stale ref without tapping anything', async () => {
    const before = (await tree()).els;
    phone.phone.apps!.receive('Grace Hopper', 'Running late');
    const after = (await tree()).els;
    for (const label of ['Ada Lovelace, See you at 6', 'Alan Turing', 'Messages', 'Start chat'])
      expect([label, find(after, label).ref]).toEqual([label, find(before, label).ref]);
    const oldGrace = find(before, 'Grace Hopper, You: OK').ref;
    expect(after.some((e) => e.ref === oldGrace)).toBe(false);
    expect(find(after, 'Grace Hopper, Running late')).toBeDefined();
    const taps = sent('/tap').length;
    const stale = await call('android_tap', { ref: oldGrace });
    expect(stale.isError).toBe(true);
    expect(code(stale)).toBe('mcp.stale_ref');
    expect(textOf(stale)).toMatch(/^no element e[0-9a-v]{8} on the screen now: .*Read it again with android_ui_tree/);
    expect(sent('/tap').length).toBe(taps);
  });

  it('taps by ref (the row opens its thread) and types by ref (the field is tapped, then filled)', async () => {
    const row = find((await tree()).els, 'Ada Lovelace, See you at 6');
    const tapped = await call('android_tap', { ref: row.ref });
    expect(tapped.isError).toBeFalsy();
    expect(textOf(tapped)).toContain(`tap on [${row.ref}] group`);
    expect(sent('/tap').at(-1)).toMatchObject({ nodeId: row.node, text: 'Ada Lovelace, See you at 6' });
    const thread = (await tree()).els;
    expect(thread.find((e) => e.id === 'toolbar_title')).toMatchObject({ text: 'Ada Lovelace' });
    const field = find(thread, 'Text message');
    expect(field).toMatchObject({ role: 'input', focused: false });
    expect(find(thread, 'Send')).toMatchObject({ role: 'button', enabled: false });
    const typed = await call('android_type', { ref: field.ref, text: 'On my way' });
    expect(typed.isError).toBeFalsy();
    // The relay's own /screen_hash asks around each act (evidence per action) are left out: the acts' order is the point.
    const order = phone.received.filter((f) => f.type === 'bridge.command' && f.payload.path !== '/screen_hash').slice(-2);
    // The focusing tap carries no label (focusing is no destructive act); the typed text goes with /type.
    expect(order.map((f) => [f.payload.path, f.payload.body])).toEqual([
      ['/tap', { nodeId: field.node }],
      ['/type', { text: 'On my way' }],
    ]);
    const filled = (await tree()).els;
    // The same field (typing is not identity), now focused and holding the text; Send is enabled.
    expect(filled.find((e) => e.ref === field.ref)).toMatchObject({ text: 'On my way', focused: true });
    expect(find(filled, 'Send')).toMatchObject({ enabled: true });
    // Typing into something that is not a field is refused before anything is sent.
    const types = sent('/type').length;
    const notField = await call('android_type', { ref: find(filled, 'Send').ref, text: 'x' });
    expect([notField.isError, code(notField)]).toEqual([true, 'mcp.not_editable']);
    expect(sent('/type').length).toBe(types);
  });

  it('a destructive button by ref is confirmed as by text: the relay reads the element’s label, the phone asks its user', async () => {
    const send = find((await tree()).els, 'Send');
    phone.confirm = 'deny';
    const denied = await call('android_tap', { ref: send.ref });
    expect(denied.isError).toBe(true);
    const asked = readEvents(relay.home).filter((e) => e.type === 'bridge.safety_decided' && e.data.decision === 'confirmation_requested');
    expect(asked.at(-1)!.data).toMatchObject({ path: '/tap', verb: 'send', by: 'phone', via: 'mcp' });
    expect(phone.modalAsked.at(-1)).toMatchObject({ path: '/tap', text: 'Send' });
    // The same through an elicitation client that declines: the relay stops it before the phone sees a tap.
    const taps = sent('/tap').length;
    const { client: asking } = await mcpConnect(relay, phone.token!, { elicit: () => ({ action: 'decline' }) });
    try {
      const declined = (await asking.callTool({ name: 'android_tap', arguments: { ref: send.ref } })) as CallToolResult;
      expect(code(declined)).toBe('bridge.confirmation_denied');
      expect(sent('/tap').length).toBe(taps);
    } finally {
      await asking.close();
    }
    phone.confirm = 'allow';
    const allowed = await call('android_tap', { query: { text: 'send', role: 'button' } });
    expect(allowed.isError).toBeFalsy();
    expect(sent('/tap').at(-1)).toMatchObject({ nodeId: send.node, text: 'Send' });
    expect(find((await tree()).els, 'On my way')).toMatchObject({ role: 'text' });
  });

  it('a long press by ref on a destructive button is confirmed as a tap on it is, or refused where nobody could confirm it; a long press by coordinates is unchanged', async () => {
    const send = find((await tree()).els, 'Send');
    const asked = () => readEvents(relay.home).filter((e) => e.type === 'bridge.safety_decided' && e.data.decision === 'confirmation_requested');
    // An elicitation client that declines: the relay stops it before the phone sees a long press.
    const presses = sent('/long_press').length;
    const { client: asking } = await mcpConnect(relay, phone.token!, { elicit: () => ({ action: 'decline' }) });
    try {
      const declined = (await asking.callTool({ name: 'android_long_press', arguments: { ref: send.ref } })) as CallToolResult;
      expect(code(declined)).toBe('bridge.confirmation_denied');
      expect(asked().at(-1)!.data).toMatchObject({ path: '/long_press', verb: 'send', by: 'mcp_client' });
      expect(sent('/long_press').length).toBe(presses);
    } finally {
      await asking.close();
    }
    // No elicitation: the phone would be the one to ask, but this Send takes no long-click, so the press goes at its
    // centre, and the app asks about a long press only on a node it reads (BridgeCommandHandler.kt:2117-2129):
    // nobody could confirm it, so the relay refuses it (recorded) and the phone sees nothing.
    const pressed = await call('android_long_press', { query: { text: 'send', role: 'button' } });
    expect(code(pressed)).toBe('bridge.unconfirmable');
    const refused = readEvents(relay.home).filter((e) => e.type === 'bridge.safety_decided' && e.data.decision === 'unconfirmable');
    expect(refused.at(-1)!.data).toMatchObject({ path: '/long_press', verb: 'send', via: 'mcp' });
    expect(sent('/long_press').length).toBe(presses);
    // By coordinates: no label, nothing read, nothing asked.
    const before = asked().length;
    const x = Math.trunc((send.bounds.left + send.bounds.right) / 2);
    const y = Math.trunc((send.bounds.top + send.bounds.bottom) / 2);
    const plain = await call('android_long_press', { x, y, coordinates: 'phone' });
    expect(plain.isError).toBeFalsy();
    expect(sent('/long_press').at(-1)).toEqual({ x, y });
    expect(asked().length).toBe(before);
  });

  it('waits for an element to appear and for one to go, and times out clearly', async () => {
    // The message just sent says Sending…, then Delivered (after 400 ms by the phone's clock).
    const delivered = await call('android_wait_for', { text: 'Delivered', timeout_ms: 10_000, poll_ms: 50 });
    expect(delivered.isError).toBeFalsy();
    expect(delivered.structuredContent).toMatchObject({ met: true, gone: false, element: { role: 'text', text: 'Delivered', id: 'message_status' } });
    expect(textOf(delivered)).toMatch(/^\[e[0-9a-v]{8}\] text "Delivered" #message_status/);
    const gone = await call('android_wait_for', { query: { text: 'Sending' }, gone: true, timeout_ms: 10_000, poll_ms: 50 });
    expect(gone.structuredContent).toMatchObject({ met: true, gone: true, element: null });
    const ref = (delivered.structuredContent as { element: El }).element.ref;
    expect(await call('android_wait_for', { ref, poll_ms: 50 })).toMatchObject({ structuredContent: { met: true, element: { ref } } });
    // The relay's clock stands still here (a manual one): the wait ends when the polls its timeout holds are spent.
    const timedOut = await call('android_wait_for', { text: 'Never on this screen', timeout_ms: 300, poll_ms: 50 });
    expect(timedOut.isError).toBe(true);
    expect(timedOut.structuredContent).toMatchObject({ ok: false, code: 'mcp.wait_timeout', timeout_ms: 300, polls: 7 });
    expect(textOf(timedOut)).toMatch(/^an element matching text "Never on this screen" did not appear within 300 ms \(\d+ polls\)/);
  });

  it('ends a wait at the deadline of the relay’s clock, not after all its polls', async () => {
    const hashes = sent('/screen_hash').length;
    const waiting = call('android_wait_for', { text: 'Never on this screen', timeout_ms: 60_000, poll_ms: 50 });
    // Two polls seen, then the relay's (manual) clock passes the deadline.
    await new Promise<void>((resolve) => {
      const check = () => (sent('/screen_hash').length >= hashes + 2 ? resolve() : setTimeout(check, 5));
      check();
    });
    relay.clock.advance(60_000);
    const r = await waiting;
    expect(r.structuredContent).toMatchObject({ code: 'mcp.wait_timeout' });
    // 60 s at 50 ms would be 120 polls (the budget); the clock ended it long before.
    expect((r.structuredContent as { polls: number }).polls).toBeLessThan(100);
  });

  it('acts by query: text and role pick one element; several or none is refused with what to do', async () => {
    await home();
    // Three snippets end in "is ready" (and their rows hold them): none is the whole label, so none is picked.
    const ambiguous = await call('android_tap', { query: { text: 'is ready' } });
    expect(code(ambiguous)).toBe('mcp.ambiguous_query');
    expect(textOf(ambiguous)).toMatch(
      /^6 elements match text "is ready": e[0-9a-v]{8} group "Charles Babbage, The engine is ready"; .*Give one's ref, or a narrower query/,
    );
    // Whole labels win over parts: "OK" is Alan's snippet, not the rows that hold it.
    const ok = await call('android_wait_for', { query: { text: 'OK', exact: true } });
    expect(ok.structuredContent).toMatchObject({ matches: 1, element: { role: 'text', id: 'conversation_snippet' } });
    expect((ambiguous.structuredContent as { candidates: unknown[] }).candidates.length).toBeGreaterThan(1);
    expect(code(await call('android_tap', { query: { text: 'Zebra' } }))).toBe('mcp.no_match');
    // Off screen: scroll first.
    const off = await call('android_tap', { query: { text: 'Neighbours', role: 'text' } });
    expect([code(off), textOf(off)]).toEqual(['mcp.off_screen', expect.stringMatching(/is off screen: scroll it into view/)]);
    await home('com.android.launcher3');
    expect((await call('android_tap', { query: { text: 'settings', role: 'text', exact: true } })).isError).toBeFalsy();
    expect(phone.state.currentApp).toBe('com.android.settings');
    const wifi = find((await tree()).els, 'Wi-Fi');
    expect(wifi.role).toBe('switch');
    expect(find((await tree()).els, 'Connected to HomeNet')).toBeDefined();
    await call('android_tap', { query: { text: 'Wi-Fi', role: 'switch' } });
    const after = (await tree()).els;
    expect(find(after, 'Off')).toBeDefined();
    // The switch is the same element after it flipped.
    expect(find(after, 'Wi-Fi').ref).toBe(wifi.ref);
    // long_press by ref on a node that takes ACTION_LONG_CLICK goes by node id; on one that does not, at its centre.
    await home();
    const els = (await tree()).els;
    await call('android_long_press', { ref: find(els, 'Alan Turing, OK').ref });
    // The label goes with it, as with a tap: the destructive-word check reads what is pressed.
    expect(sent('/long_press').at(-1)).toEqual({ node_id: find(els, 'Alan Turing, OK').node, text: 'Alan Turing, OK' });
    await call('android_long_press', { ref: find(els, 'Start chat').ref, duration: 800 });
    expect(sent('/long_press').at(-1)).toEqual({ x: 800, y: 2050, text: 'Start chat', duration: 800 });
  });

  it('refuses hostile and contradictory input with the reason, before anything reaches the phone', async () => {
    const before = phone.received.length;
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['android_tap', { ref: 'w0:3' }, 'validation_failed', /ref must be a ref from android_ui_tree/],
      ['android_tap', { ref: 'e'.repeat(100_000) }, 'validation_failed', /ref must be a ref from android_ui_tree/],
      ['android_tap', { query: { text: 'x'.repeat(100_000) } }, 'validation_failed', /query.text must be 1-500 characters/],
      ['android_tap', { query: { role: 'link' } }, 'validation_failed', /query.role must be one of/],
      ['android_tap', { ref: 'e00000000', x: 10, y: 10 }, 'mcp.bad_target', /give ref or query, or x\/y, not both/],
      ['android_long_press', { ref: 'e00000000', query: { text: 'a' } }, 'mcp.bad_target', /give ref or query, not both/],
      ['android_wait_for', { text: 'a', timeout_ms: 61_000 }, 'mcp.wait_too_long', /beyond this relay's longest wait, 60000 ms/],
      ['android_wait_for', { text: 'a', timeout_ms: 600_001 }, 'validation_failed', /timeout_ms must not be greater than 600000/],
      ['android_wait_for', { text: 'a', ref: 'e00000000' }, 'mcp.bad_target', /exactly one of ref, query or text/],
      ['android_wait_for', {}, 'mcp.bad_target', /exactly one of ref, query or text/],
    ];
    for (const [name, args, want, message] of cases) {
      const r = await call(name, args);
      expect([name, r.isError, code(r), textOf(r)]).toEqual([name, true, want, expect.stringMatching(message)]);
    }
    expect(phone.received.length).toBe(before);
  });

  it('ends a wait when the phone leaves', async () => {
    const other = await startSim(relay, { mode: 'app', ui: 'apps', deviceName: 'Leaving' });
    const { client: c } = await mcpConnect(relay, other.token!);
    try {
      const waiting = c.callTool({ name: 'android_wait_for', arguments: { device: 'Leaving', text: 'Never', timeout_ms: 30_000, poll_ms: 50 } });
      await new Promise<void>((resolve) => {
        const check = () => (other.received.some((f) => f.payload.path === '/screen_hash') ? resolve() : setTimeout(check, 5));
        check();
      });
      other.stop();
      const r = (await waiting) as CallToolResult;
      expect(r.isError).toBe(true);
      // The phone's leaving is seen as whichever comes first: its socket closing under a poll in flight (phone_gone), or the next poll finding it offline or gone.
      expect(code(r)).toMatch(/^bridge\.(no_device|phone_gone|device_offline)$/);
    } finally {
      await c.close();
    }
  });
});
