import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';
import { PhoneHub } from '../../apps/relay/src/phone-socket/phone-hub.service';
import { readEvents, type TestRelay } from '../support/harness';
import { dc, startSim, until, type Call } from '../support/bridge';
import { startRelay } from './client-relay';

/*
 * The simulator's app mode (`svc phone-sim --mode app`, apps/phone-sim/src/app-*.ts), frame by frame against the
 * app it stands in for: the real-clients run and the e2e suites see the app only through it, so where it differs
 * they see a phone that does not exist. Each case cites what it mirrors (paths under
 * app/src/main/kotlin/com/hermesandroid/relay/ of the reference checkout). docs/COMPATIBILITY.md, "The simulator's
 * app mode", lists the same behaviours.
 */

type Out = { channel: string; type: string; payload: Record<string, unknown> };

describe("compat: the simulator's app mode behaves as the app", () => {
  let relay: TestRelay;
  const sims: PhoneSim[] = [];

  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_BRIDGE_COMMAND_TIMEOUT_MS: '2000' } });
  });
  afterAll(async () => {
    for (const s of sims) s.stop();
    await relay.close();
  });

  /** An app-mode phone whose own clock is the relay's (its idle expiry runs on it), with every frame it sends recorded. */
  const app = async (o: Parameters<typeof startSim>[1] = {}): Promise<{ sim: PhoneSim; out: Out[] }> => {
    const sim = await startSim(relay, { mode: 'app', statusTickMs: 0, now: () => relay.clock.now().getTime(), ...o });
    sims.push(sim);
    const out: Out[] = [];
    const send = sim.send.bind(sim);
    sim.send = (channel, type, payload, id) => {
      out.push({ channel, type, payload });
      send(channel, type, payload, id);
    };
    return { sim, out };
  };
  /** A frame from the relay to the phone over its real socket, as any relay may send it. */
  const push = (sim: PhoneSim, channel: string, type: string, payload: Record<string, unknown>) => {
    for (const c of relay.app.get(PhoneHub).byPrefix(sim.tokenPrefix!)) c.send(channel, type, payload);
  };
  const statuses = (out: Out[]) => out.filter((f) => f.type === 'bridge.status').map((f) => f.payload);
  const call = (sim: PhoneSim, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Call> => dc(relay, sim.token!, method, path, body);

  it('answers bridge.command only: bridge.master_disabled, bridge.confirm, bridge.error and a command without request_id are dropped (BridgeCommandHandler.kt:271-284)', async () => {
    const { sim, out } = await app();
    push(sim, 'bridge', 'bridge.master_disabled', { reason: 'auto_disable', idle_minutes: 30, message: 'switched off' });
    push(sim, 'bridge', 'bridge.confirm', { request_id: 'c-1', verb: 'send', path: '/tap_text', text: 'Send' });
    push(sim, 'bridge', 'bridge.error', { code: 'bad_frame', message: 'x' });
    push(sim, 'bridge', 'bridge.command', { method: 'GET', path: '/ping', body: {} });
    // Frames of one socket are handled in order: once this answer is back, the ones above were handled.
    expect((await call(sim, 'GET', '/ping')).status).toBe(200);
    expect(out.map((f) => f.type)).toEqual(['bridge.response']);
    expect(sim.state.masterEnabled).toBe(true);
    // Its next tick (BridgeStatusReporter.kt:122-128) still says Device Control is on.
    sim.tick();
    await until(() => statuses(out).length === 1);
    expect(statuses(out)[0]).toMatchObject({ bridge: { master_enabled: true } });
    expect(relay.loop.models.bridge.device(sim.tokenPrefix!)?.masterEnabled).toBe(true);
  });

  it('reports its status every tick and at once when its master toggle flips, never because the foreground app changed (BridgeStatusReporter.kt:104,118-159; ConnectionViewModel.kt:3619-3631)', async () => {
    const ticking = await app({ statusTickMs: 40 });
    await until(() => statuses(ticking.out).length >= 3);
    ticking.sim.stop();
    expect(new (ticking.sim.constructor as typeof PhoneSim)({ relayUrl: relay.url, mode: 'app' }).statusTickMs).toBe(30_000);

    const { sim, out } = await app();
    expect((await call(sim, 'POST', '/open_app', { package: 'com.android.chrome' })).status).toBe(200);
    expect((await call(sim, 'GET', '/current_app')).body).toEqual({ package: 'com.android.chrome' });
    expect(statuses(out)).toEqual([]);
    sim.reportStatus({ masterEnabled: false });
    await until(() => relay.loop.models.bridge.device(sim.tokenPrefix!)?.masterEnabled === false);
    expect(statuses(out)).toHaveLength(1);
    expect(statuses(out)[0]).toMatchObject({ bridge: { master_enabled: false }, device: { current_app: 'com.android.chrome' } });
    // Its switch off refuses every route but /ping and /setup, /current_app too (BridgeCommandHandler.kt:594-624),
    // which the relay lets through its own master gate.
    const current = await call(sim, 'GET', '/current_app');
    expect([current.status, current.body.error_code, current.body.required_action]).toEqual([
      403,
      'bridge_disabled',
      'User toggles Agent Control ON in the Hermes Bridge tab',
    ]);
  });

  it('keeps its own idle expiry: timed screen access ends after its minutes idle, only accepted timed commands push it back, and the relay passes its refusal on (BridgeSafetyManager.kt:420-450, BridgeCapabilities.kt:62-76, BridgeCommandHandler.kt:447-490)', async () => {
    const { sim, out } = await app({ autoDisableMinutes: 20 });
    const t0 = relay.clock.now().getTime();
    sim.tick();
    await until(() => statuses(out).length === 1);
    expect(statuses(out)[0]).toMatchObject({
      safety: { auto_disable_minutes: 20, auto_disable_at_ms: t0 + 20 * 60_000 },
      capabilities: { timed: { screen_control: t0 + 20 * 60_000, screen_inspection: t0 + 20 * 60_000 } },
    });
    relay.clock.advance(15 * 60_000);
    expect((await call(sim, 'POST', '/tap', { x: 1, y: 1 })).status).toBe(200);
    relay.clock.advance(15 * 60_000);
    // Permanent grants and exempt routes neither expire nor keep screen access alive.
    expect((await call(sim, 'GET', '/clipboard')).status).toBe(200);
    expect((await call(sim, 'GET', '/ping')).status).toBe(200);
    relay.clock.advance(6 * 60_000);
    await relay.sweep();
    const tap = await call(sim, 'POST', '/tap', { x: 1, y: 1 });
    expect([tap.status, tap.body]).toEqual([
      403,
      {
        error: 'Bridge capability is not granted for this connection.',
        error_code: 'bridge_capability_expired',
        capability: 'screen_control',
        required_action: 'Review Bridge > Safety & capabilities on the phone',
      },
    ]);
    expect((await call(sim, 'GET', '/screen')).body).toMatchObject({ error_code: 'bridge_capability_expired', capability: 'screen_inspection' });
    expect((await call(sim, 'GET', '/clipboard')).status).toBe(200);
    sim.tick();
    await until(() => statuses(out).length === 2);
    expect(statuses(out)[1]).toMatchObject({ safety: { auto_disable_minutes: 20, auto_disable_at_ms: null }, capabilities: { timed: {} } });
    // The relay never switched it off itself.
    expect(readEvents(relay.home).filter((e) => e.type === 'bridge.safety_decided' && e.data.decision === 'auto_disabled')).toEqual([]);
  });

  it("asks its own modal as the app does: a tapped node's text, whole words only, always before /share_media, /call and /send_sms, never for a verb it trusts (BridgeCommandHandler.kt:641-657, 1321-1470, 2252-2290; BridgeSafetyManager.kt:291-344, 559-583)", async () => {
    const { sim } = await app();
    expect((await call(sim, 'POST', '/tap', { nodeId: 'w0:2' })).status).toBe(200);
    expect(sim.modalAsked.at(-1)).toEqual({ path: '/tap', text: 'Send' });
    const asked = sim.modalAsked.length;
    expect((await call(sim, 'POST', '/type', { text: 'the sender is here' })).status).toBe(200);
    expect(sim.modalAsked).toHaveLength(asked);
    expect((await call(sim, 'POST', '/share_media', { text: 'a note' })).status).toBe(200);
    expect((await call(sim, 'POST', '/call', { number: '+1 202 555 0142' })).status).toBe(200);
    expect((await call(sim, 'POST', '/send_sms', { to: '+1 202 555 0142', body: 'hi' })).status).toBe(200);
    expect(sim.modalAsked.slice(asked)).toEqual([
      { path: '/share_media', text: 'Share text from Hermes-Relay?' },
      { path: '/call', text: 'Call +1 202 555 0142?' },
      { path: '/send_sms', text: "Send 'hi' to +1 202 555 0142?" },
    ]);
    sim.confirm = 'deny';
    const denied = await call(sim, 'POST', '/tap_text', { text: 'Send' });
    expect([denied.status, denied.body]).toEqual([
      403,
      {
        error: expect.stringContaining('This is a FINAL denial.'),
        error_code: 'user_denied',
        status: 'blocked',
        android_result: 'user_denied',
        reason: 'confirmation_denied_or_timeout',
        final: true,
        instruction: 'Do not retry via UI automation. Denial is terminal for this intent.',
      },
    ]);

    const trusting = await app({ trustedVerbs: ['send'], confirm: 'deny' });
    expect((await call(trusting.sim, 'POST', '/tap_text', { text: 'Send' })).status).toBe(200);
    expect(trusting.sim.modalAsked).toEqual([]);
  });

  it('refuses on its own blocklist, as the app does, what the relay lets through (BridgeCommandHandler.kt:626-636, 795-815)', async () => {
    const { sim } = await app({ currentApp: 'com.monzo.android' });
    // Monzo is on the app's list (BridgeSafetyPreferences.kt:79), not the relay's.
    expect(await call(sim, 'GET', '/current_app')).toEqual({ status: 403, body: { error: 'blocked package com.monzo.android' } });
    sim.phone.setForeground('com.android.launcher3');
    expect(await call(sim, 'POST', '/open_app', { package: 'com.monzo.android' })).toEqual({
      status: 403,
      body: { error: 'blocked package com.monzo.android' },
    });
  });

  it("answers each route in the app's own shape (ActionExecutor.kt, BridgeCommandHandler.kt, ScreenReader.kt)", async () => {
    const { sim } = await app();
    const t = relay.clock.now().getTime();
    const cases: Array<[string, 'GET' | 'POST', string, unknown, number, unknown]> = [
      ['BridgeCommandHandler.kt:520-529', 'GET', '/ping', undefined, 200, { pong: true, ts: t }],
      ['BridgeCommandHandler.kt:539-548', 'POST', '/setup', {}, 200, { ok: true, note: 'setup is host-side only — phone has no setup work' }],
      ['BridgeCommandHandler.kt:751-756', 'GET', '/current_app', undefined, 200, { package: 'com.android.launcher3' }],
      ['ActionExecutor.kt:168', 'POST', '/tap', { x: 10, y: 20 }, 200, { x: 10, y: 20, duration_ms: 100 }],
      ['BridgeCommandHandler.kt:953-990', 'POST', '/tap', { nodeId: 'w0:3' }, 200, { x: 540, y: 640, duration_ms: 100 }],
      ['BridgeCommandHandler.kt:972-978', 'POST', '/tap', { nodeId: '3' }, 404, { error: 'node not resolvable: 3' }],
      [
        'ActionExecutor.kt:262-275',
        'POST',
        '/tap_text',
        { text: 'Settings' },
        200,
        { ok: true, via: 'direct click', message: 'tapped via direct click', depth: 0, needle: 'Settings' },
      ],
      ['ActionExecutor.kt:242-246', 'POST', '/tap_text', { text: 'Nowhere' }, 400, { error: 'no node found matching text: Nowhere' }],
      ['ActionExecutor.kt:680', 'POST', '/type', { text: 'hello' }, 200, { length: 5 }],
      [
        'ActionExecutor.kt:419-427',
        'POST',
        '/swipe',
        { start_x: 1, start_y: 2, end_x: 3, end_y: 4 },
        200,
        { start_x: 1, start_y: 2, end_x: 3, end_y: 4, duration_ms: 400 },
      ],
      [
        'ActionExecutor.kt:475-483',
        'POST',
        '/drag',
        { start_x: 5, start_y: 6, end_x: 7, end_y: 8 },
        200,
        { start_x: 5, start_y: 6, end_x: 7, end_y: 8, duration_ms: 500 },
      ],
      ['ActionExecutor.kt:622-628', 'POST', '/long_press', { x: 9, y: 9 }, 200, { x: 9, y: 9, duration_ms: 500, mode: 'gesture' }],
      [
        'ActionExecutor.kt:589-599',
        'POST',
        '/long_press',
        { node_id: 'w0:2' },
        400,
        { error: "ACTION_LONG_CLICK refused by node 'w0:2' (node may not be long-clickable)" },
      ],
      [
        'ActionExecutor.kt:732-742',
        'POST',
        '/scroll',
        { direction: 'down' },
        200,
        { start_x: 540, start_y: 1755, end_x: 540, end_y: 585, duration_ms: 400 },
      ],
      ['ActionExecutor.kt:781', 'POST', '/press_key', { key: 'back' }, 200, { key: 'back' }],
      ['ActionExecutor.kt:841', 'POST', '/wait', { timeoutMs: 5 }, 200, { slept_ms: 5 }],
      ['ActionExecutor.kt:874', 'GET', '/clipboard', undefined, 200, { text: '' }],
      ['ActionExecutor.kt:905', 'POST', '/clipboard', { text: 'abc' }, 200, { success: true, length: 3 }],
      ['ActionExecutor.kt:808-826', 'POST', '/media', { action: 'toggle' }, 200, { action: 'toggle', keycode: 85 }],
      ['BridgeCommandHandler.kt:931-950', 'POST', '/events/stream', { enabled: true }, 200, { streaming: true, buffer_cleared: true }],
      [
        'ActionExecutor.kt:995-1002',
        'POST',
        '/send_intent',
        { action: 'android.intent.action.VIEW', package: 'com.android.chrome' },
        200,
        { action: 'android.intent.action.VIEW', package: 'com.android.chrome', component: '', data: '' },
      ],
      [
        'ActionExecutor.kt:1051-1057',
        'POST',
        '/broadcast',
        { action: 'com.example.PING', package: 'com.example' },
        200,
        { action: 'com.example.PING', package: 'com.example', data: '' },
      ],
      ['ActionExecutor.kt:1583-1588', 'POST', '/call', { number: '+1 202 555 0142' }, 200, { number: '+1 202 555 0142', mode: 'auto_dial' }],
      [
        'ActionExecutor.kt:1801-1810',
        'POST',
        '/send_sms',
        { to: '+1 202 555 0142', body: 'hi' },
        200,
        {
          status: 'sent',
          android_result: 'RESULT_OK',
          to: '+1 202 555 0142',
          length: 2,
          parts: 1,
          summary: 'SMS sent to +1 202 555 0142 (1 part(s))',
        },
      ],
    ];
    for (const [cite, method, path, body, status, expected] of cases) {
      const r = await call(sim, method, path, body);
      expect([cite, path, r.status, r.body]).toEqual([cite, path, status, expected]);
    }

    const screen = await call(sim, 'GET', '/screen');
    // ScreenReader.kt:256-300: only nodes with text, a description or an action are listed, numbered w<window>:<n>.
    expect(screen.body.nodes.map((n: { nodeId: string; text: string | null }) => [n.nodeId, n.text])).toEqual([
      ['w0:0', 'Messages'],
      ['w0:1', null],
      ['w0:2', 'Send'],
      ['w0:3', 'Settings'],
      ['w0:4', null],
    ]);
    expect(screen.body).toMatchObject({
      packageName: 'com.android.launcher3',
      rootBounds: { left: 0, top: 0, right: 1080, bottom: 2340 },
      truncated: false,
      nodeCount: 5,
    });
    const found = await call(sim, 'POST', '/find_nodes', { text: 'send' });
    expect(found.body).toEqual({ matches: [screen.body.nodes[2]], count: 1 });
    const described = await call(sim, 'POST', '/describe_node', { nodeId: 'w0:2' });
    expect(described.body).toMatchObject({
      nodeId: 'w0:2',
      bounds: { left: 0, top: 440, right: 1080, bottom: 560, centerX: 540, centerY: 500, width: 1080, height: 120 },
      className: 'android.widget.Button',
      text: 'Send',
      viewIdResourceName: 'app:id/send',
      checked: null,
      password: false,
    });
    const hash = await call(sim, 'GET', '/screen_hash');
    expect(hash.body).toEqual({ hash: expect.stringMatching(/^[0-9a-f]{64}$/), node_count: 5, truncated: false });
    expect((await call(sim, 'POST', '/diff_screen', { previous_hash: hash.body.hash })).body).toEqual({
      changed: false,
      hash: hash.body.hash,
      node_count: 5,
      truncated: false,
    });
    const apps = await call(sim, 'GET', '/get_apps');
    expect(apps.body).toMatchObject({
      apps: expect.arrayContaining([{ package: 'com.android.chrome', label: 'Chrome' }]),
      count: apps.body.apps.length,
    });

    // Events are kept only while streaming (EventStore.kt:116-133), in its entry shape (:79-87, 225-243).
    await call(sim, 'POST', '/tap', { x: 3, y: 3 });
    const events = await call(sim, 'GET', '/events?limit=5');
    expect(events.body).toEqual({
      entries: [{ timestamp: t, event_type: 'click', package_name: 'com.android.launcher3', source: 'TYPE_VIEW_CLICKED' }],
      count: 1,
      streaming: true,
    });
    const contacts = await call(sim, 'POST', '/search_contacts', { query: 'ada' });
    expect(contacts.body).toEqual({
      count: 1,
      query: 'ada',
      contacts: [{ id: 1, name: 'Ada Lovelace', phones: [{ number: '+44 20 7946 0018', type: 'mobile', label: 'Mobile' }] }],
    });
    expect((await call(sim, 'GET', '/location')).body).toMatchObject({
      latitude: expect.any(Number),
      provider: 'fused',
      timestamp: t - 30_000,
      staleness_ms: 30_000,
    });
    expect((await call(sim, 'POST', '/return_to_hermes', {})).body).toEqual({ ok: true, package: 'com.hermesandroid.relay' });
    expect((await call(sim, 'POST', '/return_to_hermes', {})).body).toEqual({
      ok: true,
      package: 'com.hermesandroid.relay',
      note: 'already foreground',
    });
  });
});
