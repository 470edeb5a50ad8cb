import { bearer, readEvents, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { dc, op, startSim, until } from '../support/bridge';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/*
 * The real Android app on the bridge channel, as its Kotlin sources show it. The phone here is the
 * simulator in `app` mode (apps/relay/src/phone-sim), which follows the app's dispatcher; the frames
 * that matter are spelled out below as fixtures, each citing where the app builds or reads it
 * (paths under app/src/main/kotlin/com/hermesandroid/relay/).
 */

/** accessibility/BridgeStatusReporter.kt:238-351 (emitTick): groups nested, legacy keys repeated flat. */
const APP_STATUS = {
  device: { name: 'Pixel 8', battery_percent: -1, screen_on: true, current_app: 'unknown', flavor: 'sideload' }, // :240-247
  bridge: {
    device_control_supported: true, // :264
    master_enabled: true, // :265
    accessibility_granted: true,
    screen_capture_granted: true,
    overlay_granted: false,
    notification_listener_granted: false,
  },
  safety: { blocklist_count: 12, destructive_verbs_count: 8, auto_disable_minutes: 20, auto_disable_at_ms: null }, // :277-283
  capabilities: { schema_version: 1, permanent: [], timed: {}, unlimited: [] },
  unattended: { supported: true, enabled: false },
  screen_on: true, // :346
  battery: -1, // :347 (BatteryManager failed and the sticky intent too: -1, :183 and :368)
  current_app: 'unknown', // :348 (no accessibility event seen yet)
  accessibility_enabled: true, // :349
  ts: 1_760_000_000_000,
};

/** auth/AuthManager.kt:820-825: the only `supports` the app sends; no bridge confirmation flag. */
const APP_SUPPORTS = { typed_stream_events: true, event_schema_version: 1 };

/** network/relay/BridgeCommandHandler.kt:2177-2196 (userDeniedResponse), answered with 403. */
const USER_DENIED = {
  error_code: 'user_denied',
  status: 'blocked',
  android_result: 'user_denied',
  reason: 'confirmation_denied_or_timeout',
  final: true,
};

type Ev = { seq: number; type: string; actor: string; data: Record<string, unknown> };

describe('compat: the Android app on the bridge channel', () => {
  let relay: TestRelay;
  let app: PhoneSim;
  const commands = () => app.received.filter((f) => f.type === 'bridge.command').map((f) => f.payload);
  const lastCommand = () => commands().at(-1)!;
  const events = (type: string): Ev[] => readEvents(relay.home).filter((e) => e.type === type) as Ev[];

  beforeAll(async () => {
    // Short timeouts: a phone that never answers its own modal fails in ~1.3 s here.
    relay = await startRelay({ env: { RELAY_BRIDGE_COMMAND_TIMEOUT_MS: '300', RELAY_BRIDGE_CONFIRM_TIMEOUT_SECONDS: '1' } });
    app = await startSim(relay, { mode: 'app', currentApp: 'com.android.chrome', autoDisableMinutes: 20 });
  });
  afterAll(async () => {
    app.stop();
    await relay.close();
  });

  describe('bridge.status', () => {
    it('reads the nested shape: master toggle and support under bridge {}, auto-disable under safety {}; battery -1 and "unknown" are unknown', async () => {
      app.send('bridge', 'bridge.status', APP_STATUS);
      await until(() => relay.loop.models.bridge.device(app.tokenPrefix!)?.battery === null);
      expect(relay.loop.models.bridge.device(app.tokenPrefix!)).toMatchObject({
        masterEnabled: true,
        deviceControlSupported: true,
        accessibilityEnabled: true,
        screenOn: true,
        battery: null,
        currentApp: null,
        autoDisableMinutes: 20,
      });
      // Before: every command was 403 sideload_only because the flags were read at the top level only.
      const r = await dc(relay, app.token!, 'POST', '/tap', { x: 10, y: 20 });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ x: 10, y: 20, duration_ms: 100 }); // accessibility/ActionExecutor.kt:168
    });

    it('a nested value wins over a flat one, and the flat shape alone still works', async () => {
      app.send('bridge', 'bridge.status', { ...APP_STATUS, master_enabled: true, bridge: { ...APP_STATUS.bridge, master_enabled: false } });
      await until(() => relay.loop.models.bridge.device(app.tokenPrefix!)?.masterEnabled === false);
      app.send('bridge', 'bridge.status', { master_enabled: true, device_control_supported: true, battery: 55, current_app: 'com.android.chrome' });
      await until(() => relay.loop.models.bridge.device(app.tokenPrefix!)?.battery === 55);
      expect(relay.loop.models.bridge.device(app.tokenPrefix!)).toMatchObject({ masterEnabled: true, currentApp: 'com.android.chrome' });
    });

    it('a malformed group is a bad_frame error and records nothing', async () => {
      const before = events('bridge.status_reported').length;
      app.send('bridge', 'bridge.status', { ...APP_STATUS, bridge: 'on' });
      app.send('bridge', 'bridge.status', { ...APP_STATUS, bridge: { master_enabled: 'yes' } });
      await new Promise((r) => setTimeout(r, 100));
      expect(events('bridge.status_reported').length).toBe(before);
      app.reportStatus();
      await until(() => relay.loop.models.bridge.device(app.tokenPrefix!)?.battery === 87);
    });
  });

  describe('destructive verbs: the app confirms on the phone', () => {
    it('the app sends supports without bridge_confirm: no bridge.confirm, the command goes at once and the allow is recorded as the phone decided it', async () => {
      expect(APP_SUPPORTS).not.toHaveProperty('bridge_confirm');
      app.confirm = 'allow';
      const r = await dc(relay, app.token!, 'POST', '/tap_text', { text: 'Send', exact: false });
      expect(r.status).toBe(200);
      expect(app.received.filter((f) => f.type === 'bridge.confirm')).toHaveLength(0);
      expect(app.modalAsked.at(-1)).toEqual({ path: '/tap_text', text: 'Send' });
      const id = lastCommand().request_id;
      const decided = events('bridge.safety_decided').filter((e) => e.data.requestId === id);
      expect(decided.map((e) => [e.data.decision, e.data.by])).toEqual([
        ['confirmation_requested', 'phone'],
        ['confirmation_allowed', 'phone'],
      ]);
      expect(relay.loop.models.bridge.pendingConfirmations()).toEqual([]);
    });

    it("the phone's denial comes back as its 403 user_denied, recorded as confirmation_denied by the phone", async () => {
      app.confirm = 'deny';
      const r = await dc(relay, app.token!, 'POST', '/type', { text: 'delete everything', clearFirst: false });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject(USER_DENIED);
      const id = lastCommand().request_id;
      const decided = events('bridge.safety_decided').filter((e) => e.data.requestId === id);
      expect(decided.map((e) => [e.data.decision, e.data.by])).toEqual([
        ['confirmation_requested', 'phone'],
        ['confirmation_denied', 'phone'],
      ]);
      app.confirm = 'allow';
    });

    it("a denial from the phone's own modal on a route the relay let through is still recorded as the user's decision", async () => {
      app.confirm = 'deny';
      const r = await dc(relay, app.token!, 'POST', '/send_mms', { to: '+1 202 555 0142', body: 'send this', attachments: [] });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject(USER_DENIED);
      const id = lastCommand().request_id;
      const decided = events('bridge.safety_decided').filter((e) => e.data.requestId === id);
      expect(decided.map((e) => [e.data.decision, e.data.by ?? null])).toEqual([
        ['allow', null],
        ['confirmation_denied', 'phone'],
      ]);
      app.confirm = 'allow';
    });

    it('a modal left unanswered times out after the command and the confirmation windows, recorded as confirmation_timed_out', async () => {
      app.confirm = 'ignore';
      const r = await dc(relay, app.token!, 'POST', '/tap_text', { text: 'Pay now' });
      expect(r.status).toBe(504);
      const id = lastCommand().request_id;
      const decided = events('bridge.safety_decided').filter((e) => e.data.requestId === id);
      expect(decided.map((e) => [e.data.decision, e.data.by])).toEqual([
        ['confirmation_requested', 'phone'],
        ['confirmation_timed_out', 'phone'],
      ]);
      app.confirm = 'allow';
    });

    it('a phone that advertises supports.bridge_confirm is still asked by the relay (bridge.confirm)', async () => {
      const legacy = await startSim(relay, { confirm: 'allow' });
      try {
        const r = await dc(relay, legacy.token!, 'POST', '/tap_text', { text: 'Send' });
        expect(r.status).toBe(200);
        const confirm = legacy.received.find((f) => f.type === 'bridge.confirm')!.payload;
        const decided = events('bridge.safety_decided').filter((e) => e.data.requestId === confirm.request_id);
        expect(decided.map((e) => [e.data.decision, e.data.by])).toEqual([
          ['confirmation_requested', 'relay'],
          ['confirmation_allowed', 'relay'],
        ]);
      } finally {
        legacy.stop();
        await legacy.closed;
      }
    });
  });

  describe('/screenshot: the app uploads the PNG itself', () => {
    it('accepts {media: "MEDIA:hermes-relay://<token>"} and gives callers the token, both markers and image/width/height', async () => {
      // network/relay/BridgeCommandHandler.kt:1629-1641 answers {media}; accessibility/ScreenCapture.kt:562-590 uploads
      // multipart `file` to POST /media/upload with the session bearer and reads `"token"` from the answer.
      const r = await dc(relay, app.token!, 'GET', '/screenshot');
      expect(r.status).toBe(200);
      const token = r.body.token as string;
      expect(r.body).toMatchObject({
        ok: true,
        media_token: token,
        media: `MEDIA:hermes-relay://${token}`,
        marker: `MEDIA:hermes-relay://${token}`,
        content_type: 'image/png',
        width: 54,
        height: 96,
      });
      const png = Buffer.from(r.body.image as string, 'base64');
      expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
      expect(png.length).toBe(r.body.size_bytes);
      const fetched = await fetch(`${relay.url}/media/${token}`, { headers: bearer(app.token!) });
      expect(Buffer.from(await fetched.arrayBuffer()).equals(png)).toBe(true);
    });

    it('a marker naming no live upload is a 502, never a 500', async () => {
      app.handlers['/screenshot'] = () => ({ status: 200, result: { media: 'MEDIA:hermes-relay://AAAAAAAAAAAAAAAAAAAAAA' } });
      const unknown = await dc(relay, app.token!, 'GET', '/screenshot');
      app.handlers['/screenshot'] = () => ({ status: 200, result: { media: 'MEDIA:file:///data/cache/shot.png' } });
      const local = await dc(relay, app.token!, 'GET', '/screenshot');
      delete app.handlers['/screenshot'];
      expect([unknown.status, unknown.body.code]).toEqual([502, 'bridge.bad_screenshot']);
      expect([local.status, local.body.code]).toEqual([502, 'bridge.bad_screenshot']);
    });
  });

  describe("arguments as the app's handlers read them", () => {
    it('GET arguments travel in body (the app reads params only when body is absent, BridgeCommandHandler.kt:287-289)', async () => {
      const r = await dc(relay, app.token!, 'GET', '/events?limit=1&since=0');
      expect(r.status).toBe(200);
      expect(lastCommand().body).toEqual({ limit: 1, since: 0 });

      // The app keeps events only while streaming (EventStore.kt:116-133).
      expect((await dc(relay, app.token!, 'POST', '/events/stream', { enabled: true })).body).toEqual({ streaming: true, buffer_cleared: true });
      await dc(relay, app.token!, 'POST', '/tap', { x: 1, y: 1 });
      await dc(relay, app.token!, 'POST', '/tap', { x: 2, y: 2 });
      const ev = await dc(relay, app.token!, 'GET', '/events?limit=1&since=0');
      expect(ev.body.count).toBe(1);
      await dc(relay, app.token!, 'POST', '/events/stream', { enabled: false });
    });

    it('/screen?include_bounds=false: the app would list no node, so the relay asks with bounds and leaves them out for the caller (ScreenReader.kt:256-274)', async () => {
      // android_tool.py:229-236 android_read_screen() asks include_bounds=false by default; the app zeroes the bounds
      // before deciding which nodes are worth listing, and a node with empty bounds never is.
      const r = await dc(relay, app.token!, 'GET', '/screen?include_bounds=false');
      expect(r.status).toBe(200);
      expect(lastCommand().body).toEqual({ include_bounds: true });
      expect((r.body.nodes as Array<{ text: string | null }>).map((n) => n.text)).toEqual(['Messages', null, 'Send', 'Settings', null]);
      for (const n of r.body.nodes as Array<Record<string, unknown>>) expect(n).not.toHaveProperty('bounds');
      expect(r.body).toMatchObject({ rootBounds: { left: 0, top: 0, right: 1080, bottom: 2340 }, nodeCount: 5 });
      const withBounds = await dc(relay, app.token!, 'GET', '/screen');
      expect((withBounds.body.nodes as Array<Record<string, unknown>>)[2].bounds).toEqual({ left: 0, top: 440, right: 1080, bottom: 560 });
    });

    it('/wait: android_tool.py sends timeoutMs, the app sleeps `ms` (BridgeCommandHandler.kt:1187)', async () => {
      const r = await dc(relay, app.token!, 'POST', '/wait', { timeoutMs: 40, text: 'Done' });
      expect(r.body).toEqual({ slept_ms: 40 });
      expect(lastCommand().body).toMatchObject({ ms: 40, timeoutMs: 40, text: 'Done' });
    });

    it('/swipe: a direction becomes the coordinates the app needs (BridgeCommandHandler.kt:1053-1066), sized by the last /screen', async () => {
      const r = await dc(relay, app.token!, 'POST', '/swipe', { direction: 'up', distance: 'medium' });
      expect(r.status).toBe(200);
      // The last /screen showed rootBounds 1080x2340: up = finger from below the centre to above it, half the height.
      // accessibility/ActionExecutor.kt:419-427 answers the stroke it made.
      expect(r.body).toEqual({ start_x: 540, start_y: 1170 + 585, end_x: 540, end_y: 1170 - 585, duration_ms: 400 });
      expect(lastCommand().body).toMatchObject({ direction: 'up', distance: 'medium' });
      const left = await dc(relay, app.token!, 'POST', '/swipe', { direction: 'left', distance: 'short' });
      expect(left.body).toMatchObject({ start_x: 540 + 135, start_y: 1170, end_x: 540 - 135, end_y: 1170 });
      const explicit = await dc(relay, app.token!, 'POST', '/swipe', { start_x: 1, start_y: 2, end_x: 3, end_y: 4, duration_ms: 250 });
      expect(explicit.body).toEqual({ start_x: 1, start_y: 2, end_x: 3, end_y: 4, duration_ms: 250 });
    });

    it('/find_nodes keeps limit (BridgeCommandHandler.kt:1515); /media accepts toggle (ActionExecutor.kt:811)', async () => {
      const found = await dc(relay, app.token!, 'POST', '/find_nodes', { limit: 1, clickable: true });
      expect(found.status).toBe(200);
      expect(found.body.count).toBe(1);
      expect(lastCommand().body).toEqual({ limit: 1, clickable: true });
      const media = await dc(relay, app.token!, 'POST', '/media', { action: 'toggle' });
      expect([media.status, media.body]).toEqual([200, { action: 'toggle', keycode: 85 }]); // ActionExecutor.kt:826
    });

    it('/return_to_svc and /return_to_hermes reach the app as POST /return_to_hermes (BridgeCapabilities.kt:78)', async () => {
      for (const [method, route] of [
        ['POST', '/return_to_svc'],
        ['GET', '/return_to_svc'],
        ['POST', '/return_to_hermes'],
      ] as const) {
        const r = await dc(relay, app.token!, method, route, method === 'POST' ? {} : undefined);
        expect([route, r.status]).toEqual([route, 200]);
        expect(lastCommand()).toMatchObject({ method: 'POST', path: '/return_to_hermes' });
      }
    });

    it('share_media: MEDIA:svc-relay:// and MEDIA:hermes-relay:// markers reach the app in the scheme it fetches (BridgeCommandHandler.kt:1947)', async () => {
      const shot = await dc(relay, app.token!, 'GET', '/screenshot');
      const token = shot.body.token as string;
      for (const media of [`MEDIA:hermes-relay://${token}`, `MEDIA:svc-relay://${token}`, token]) {
        const r = await dc(relay, app.token!, 'POST', '/share_media', {
          attachments: [{ media, content_type: 'image/png', file_name: 'shot.png' }],
        });
        // BridgeCommandHandler.kt:1905-1920 (shareMediaFromBody's answer; null fields left out by respondFromResult).
        expect([media, r.status, r.body]).toEqual([
          media,
          200,
          {
            ok: true,
            status: 'share_opened',
            mode: 'user_confirmed_share',
            attachments: 1,
            content_types: ['image/png'],
            summary: 'Opened share UI with 1 attachment(s)',
          },
        ]);
        expect((lastCommand().body as Record<string, unknown>).attachments).toEqual([
          { media: `MEDIA:hermes-relay://${token}`, media_token: token, content_type: 'image/png', file_name: 'shot.png' },
        ]);
      }
      const bad = await dc(relay, app.token!, 'POST', '/share_media', { attachments: [{ media: 'MEDIA:other://x' }] });
      expect([bad.status, bad.body.ok, bad.body.code]).toEqual([400, false, 'validation_failed']);
    });
  });

  // Last: it moves the relay's clock past the app's idle minutes.
  describe("idle expiry: the app's own, never the relay's", () => {
    it('the relay keeps no deadline for the app: no auto_disabled, no bridge.master_disabled, no "switched off on the phone" of its own making', async () => {
      // auth/AuthManager.kt:820-825: the app's supports names no bridge_master_disabled. network/relay/BridgeCommandHandler.kt:271-276
      // drops every bridge frame but bridge.command, so a relay's bridge.master_disabled never reaches its switch, and its
      // next tick (accessibility/BridgeStatusReporter.kt:104,122-128) says master_enabled: true again. Its own idle expiry
      // (bridge/BridgeSafetyManager.kt:420-450) ends timed screen access after safety.auto_disable_minutes (:277-283).
      expect(APP_SUPPORTS).not.toHaveProperty('bridge_master_disabled');
      app.send('bridge', 'bridge.status', { ...APP_STATUS, device: { ...APP_STATUS.device, battery_percent: 61 } });
      await until(() => relay.loop.models.bridge.device(app.tokenPrefix!)?.battery === 61);
      expect(relay.loop.models.bridge.device(app.tokenPrefix!)).toMatchObject({
        masterEnabled: true,
        autoDisableMinutes: 20,
        autoDisableBy: 'phone',
        autoDisableAt: null,
      });
      expect((await dc(relay, app.token!, 'POST', '/tap', { x: 5, y: 6 })).status).toBe(200);
      expect(relay.loop.models.bridge.device(app.tokenPrefix!)?.autoDisableAt).toBeNull();

      relay.clock.advance(25 * 60_000);
      await relay.sweep();
      expect(events('bridge.safety_decided').filter((e) => e.data.decision === 'auto_disabled')).toEqual([]);
      expect(app.received.filter((f) => f.type === 'bridge.master_disabled')).toEqual([]);
      // The phone answers for itself (its own timer runs on its own clock here, so it still allows the tap).
      const r = await dc(relay, app.token!, 'POST', '/tap', { x: 7, y: 8 });
      expect(r.status).toBe(200);
      expect(r.body).not.toMatchObject({ code: 'bridge.master_disabled' });

      const devices = await op(relay, 'GET', '/bridge/devices');
      expect(devices.body.devices.find((d: { token_prefix: string }) => d.token_prefix === app.tokenPrefix)).toMatchObject({
        auto_disable_by: 'phone',
        auto_disable_minutes: 20,
        auto_disable_at: null,
      });
      const status = await op(relay, 'GET', '/bridge/status');
      expect(status.body.safety).toMatchObject({ auto_disable_by: 'phone', auto_disable_minutes: 20, auto_disable_at: null });
    });

    it("a phone that advertises supports.bridge_master_disabled keeps the relay's deadline and is told when it passes", async () => {
      const legacy = await startSim(relay, { autoDisableMinutes: 10 });
      try {
        const dev = () => relay.loop.models.bridge.device(legacy.tokenPrefix!)!;
        expect(dev()).toMatchObject({ autoDisableBy: 'relay', autoDisableAt: relay.clock.now().getTime() + 10 * 60_000 });
        relay.clock.advance(10 * 60_000);
        await relay.sweep();
        expect(await legacy.nextReceived('bridge.master_disabled')).toMatchObject({ reason: 'auto_disable', idle_minutes: 10 });
        await until(() => dev().masterEnabled === false);
      } finally {
        legacy.stop();
        await legacy.closed;
      }
    });
  });
});
