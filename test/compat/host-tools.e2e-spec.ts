import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';
import { startSim, until } from '../support/bridge';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';
import { makePng } from '../../apps/phone-sim/src/png';

/*
 * The agent host's Device Control tools (plugin/tools/android_tool.py) against our relay and an
 * app-shaped phone: the exact requests each tool makes (requests.get/post with
 * `Authorization: Bearer $ANDROID_BRIDGE_TOKEN`, JSON bodies) and the fields it reads from the answer.
 */

type Answer = { status: number; body: Record<string, any> };

/** android_tool.py:118-123 `_auth_headers`, :183-198 `_post` / `_get` (requests: json= sets the content type). */
async function tool(
  relay: TestRelay,
  token: string | null,
  method: 'GET' | 'POST',
  route: string,
  payload?: Record<string, unknown>,
): Promise<Answer> {
  const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'python-requests/2.31.0' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${relay.url}${route}`, { method, headers, body: payload === undefined ? undefined : JSON.stringify(payload) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

/** android_tool.py:144-181 `_check_requirements`, transcribed: /bridge/status first, /ping as the fallback. */
async function checkRequirements(relay: TestRelay, token: string | null): Promise<boolean> {
  const st = await tool(relay, token, 'GET', '/bridge/status');
  if (st.status === 200) {
    const bridge = st.body.bridge;
    if (bridge && typeof bridge === 'object' && bridge.device_control_supported === false) return false;
    return Boolean(st.body.phone_connected);
  }
  const ping = await tool(relay, token, 'GET', '/ping');
  if (ping.status !== 200) return false;
  return Boolean(ping.body.phone_connected || ping.body.accessibilityService || ping.body.pong);
}

describe('compat: android_tool.py against the relay', () => {
  let relay: TestRelay;
  let app: PhoneSim;
  let token: string;

  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(async () => {
    app?.stop();
    await relay.close();
  });

  it('/bridge/status without a phone: 503 {phone_connected: false}, so the tools are unavailable', async () => {
    // plugin/relay/server.py handle_bridge_status: 503 {"phone_connected": false, ...} when no phone ever reported.
    const st = await tool(relay, null, 'GET', '/bridge/status');
    expect(st.status).toBe(503);
    expect(st.body).toMatchObject({ ok: false, phone_connected: false, code: 'bridge.no_device' });
    expect(await checkRequirements(relay, null)).toBe(false);
  });

  it('/bridge/status with an app-shaped phone: top-level phone_connected, bridge.device_control_supported', async () => {
    app = await startSim(relay, { mode: 'app', currentApp: 'com.android.chrome' });
    token = app.token!;
    const st = await tool(relay, token, 'GET', '/bridge/status');
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ phone_connected: true, bridge: { device_control_supported: true, master_enabled: true } });
    expect(await checkRequirements(relay, token)).toBe(true);
  });

  it('a Google Play build (no Device Control) makes the check false', async () => {
    app.reportStatus({ deviceControlSupported: false });
    await new Promise((r) => setTimeout(r, 50));
    expect(await checkRequirements(relay, token)).toBe(false);
    // Taking Device Control away is recorded at once; giving it back may wait for the end of the
    // phone's one-second status window (a restated status is recorded at most once a second).
    app.reportStatus({ deviceControlSupported: true });
    await until(() => relay.loop.models.bridge.device(app.tokenPrefix!)?.deviceControlSupported === true, 2000);
    expect(await checkRequirements(relay, token)).toBe(true);
  });

  it('android_ping (:221): GET /ping, the answer is wrapped as {status: ok, bridge: data}', async () => {
    const r = await tool(relay, token, 'GET', '/ping');
    expect(r.status).toBe(200);
    expect(r.body.pong).toBe(true);
  });

  it('android_read_screen (:229): GET /screen?include_bounds=false|true', async () => {
    const without = await tool(relay, token, 'GET', '/screen?include_bounds=false');
    const withB = await tool(relay, token, 'GET', '/screen?include_bounds=true');
    expect([without.status, withB.status]).toEqual([200, 200]);
    // The app lists no node when asked without bounds (ScreenReader.kt:256-274): the relay asks with them and leaves them out.
    expect(without.body.nodes.length).toBe(withB.body.nodes.length);
    expect(without.body.nodes.every((n: Record<string, unknown>) => n.bounds === undefined)).toBe(true);
    expect(withB.body.nodes.every((n: Record<string, unknown>) => typeof n.bounds === 'object')).toBe(true);
  });

  it('android_find_nodes (:242): POST /find_nodes {limit, text?, class_name?, clickable?}', async () => {
    const r = await tool(relay, token, 'POST', '/find_nodes', { limit: 1, clickable: true });
    expect(r.status).toBe(200);
    expect(r.body.count).toBe(1);
  });

  it('android_tap (:278): POST /tap {x, y} or {nodeId}', async () => {
    const xy = await tool(relay, token, 'POST', '/tap', { x: 540, y: 1200 });
    const node = await tool(relay, token, 'POST', '/tap', { nodeId: 'w0:3' });
    // accessibility/ActionExecutor.kt:168; a node id is the app's `w<window>:<n>` (ScreenReader.kt:290), tapped at its centre.
    expect([xy.status, xy.body]).toEqual([200, { x: 540, y: 1200, duration_ms: 100 }]);
    expect([node.status, node.body]).toEqual([200, { x: 540, y: 640, duration_ms: 100 }]);
  });

  it('android_tap_text (:299): POST /tap_text {text, exact}', async () => {
    const r = await tool(relay, token, 'POST', '/tap_text', { text: 'Settings', exact: false });
    // accessibility/ActionExecutor.kt:262-275.
    expect([r.status, r.body.via, r.body.needle]).toEqual([200, 'direct click', 'Settings']);
  });

  it('android_swipe (:404): POST /swipe {direction, distance} reaches the app as coordinates', async () => {
    const r = await tool(relay, token, 'POST', '/swipe', { direction: 'down', distance: 'long' });
    expect(r.status).toBe(200);
    expect(r.body.start_y).toBeLessThan(r.body.end_y); // accessibility/ActionExecutor.kt:419-427
  });

  it('android_wait (:589): POST /wait {timeoutMs, text?, className?}', async () => {
    const r = await tool(relay, token, 'POST', '/wait', { timeoutMs: 30, text: 'Done' });
    expect([r.status, r.body]).toEqual([200, { slept_ms: 30 }]);
  });

  it('android_screenshot (:499): GET /screenshot, reads data.get("data", data)["image"], width, height', async () => {
    const r = await tool(relay, token, 'GET', '/screenshot');
    expect(r.status).toBe(200);
    expect('error' in r.body).toBe(false);
    const result = r.body.data ?? r.body;
    const bytes = Buffer.from(result.image, 'base64');
    expect(bytes.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect([result.width, result.height]).toEqual([54, 96]);
  });

  it('android_share_media (:1121): a host path registered through /media/register, sent as {media: "MEDIA:hermes-relay://<token>", content_type, file_name}', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-host-tools-')), 'chart.png');
    fs.writeFileSync(file, makePng(8, 8, 1));
    // plugin/relay/client.py:95-115 register_media: POST /media/register {path, content_type, file_name, sensitive}, no bearer.
    const reg = await tool(relay, null, 'POST', '/media/register', {
      path: file,
      content_type: 'image/png',
      file_name: 'chart.png',
      sensitive: false,
    });
    expect([reg.status, reg.body.ok]).toEqual([200, true]);
    const r = await tool(relay, token, 'POST', '/share_media', {
      attachments: [{ media: `MEDIA:hermes-relay://${reg.body.token}`, content_type: 'image/png', file_name: 'chart.png' }],
      text: 'the chart',
    });
    // network/relay/BridgeCommandHandler.kt:1905-1920.
    expect([r.status, r.body]).toMatchObject([200, { ok: true, status: 'share_opened', attachments: 1, content_types: ['image/png'] }]);
  });

  it('android_send_mms (:1167): body "" with one attachment; android_return_to_hermes (:1004): POST /return_to_hermes {}', async () => {
    const shot = await tool(relay, token, 'GET', '/screenshot');
    const mms = await tool(relay, token, 'POST', '/send_mms', {
      to: '+1 202 555 0142',
      body: '',
      attachments: [{ media: `MEDIA:hermes-relay://${shot.body.token}`, content_type: 'image/png' }],
    });
    expect(mms.status).toBe(200);
    const back = await tool(relay, token, 'POST', '/return_to_hermes', {});
    expect([back.status, back.body.package]).toEqual([200, 'com.hermesandroid.relay']);
  });

  it('android_media (:629) toggle, android_get_apps (:608) GET /apps, android_events (:730) GET /events?limit&since', async () => {
    const media = await tool(relay, token, 'POST', '/media', { action: 'toggle' });
    const apps = await tool(relay, token, 'GET', '/apps');
    const events = await tool(relay, token, 'GET', '/events?limit=2&since=0');
    expect([media.status, apps.status, events.status]).toEqual([200, 200, 200]);
    expect(Array.isArray(apps.body.apps)).toBe(true);
    expect(events.body.entries.length).toBeLessThanOrEqual(2);
    expect(typeof events.body.streaming).toBe('boolean');
  });

  it('android_send_intent (:1588) / android_broadcast (:1641) naming no app: the agent reads why from the 403 (issue 34)', async () => {
    // The tool: `_post` (:183) calls r.raise_for_status(), and `except Exception as e: return json.dumps({"error": str(e)})`
    // (:1634-1638, :1670-1674). requests' raise_for_status (models.py) builds str(e) from the status line alone:
    // f"{status_code} Client Error: {reason} for url: {url}". The relay's reason phrase is what the agent reads.
    const agentSees = async (route: string, payload: Record<string, unknown>) => {
      const url = `${relay.url}${route}`;
      const res = await fetch(url, {
        method: 'POST',
        headers: { accept: '*/*', 'user-agent': 'python-requests/2.31.0', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      if (res.status < 400) return JSON.stringify(await res.json());
      return JSON.stringify({ error: `${res.status} Client Error: ${res.statusText} for url: ${url}` });
    };
    expect(await agentSees('/send_intent', { action: 'android.intent.action.VIEW', data: 'venmo://paycharge?amount=100' })).toBe(
      JSON.stringify({ error: `403 Client Error: Implicit intent refused: name the package or component for url: ${relay.url}/send_intent` }),
    );
    expect(await agentSees('/broadcast', { action: 'com.venmo.ACTION' })).toContain('403 Client Error: Implicit intent refused');
    expect(
      await agentSees('/send_intent', { action: 'android.intent.action.MAIN', package: 'com.android.chrome', component: 'com.venmo/.Main' }),
    ).toContain('403 Client Error: Blocked package com.venmo');
    // The tool's own examples (:1597-1607) work once they name their app.
    expect(
      JSON.parse(
        await agentSees('/send_intent', { action: 'android.intent.action.DIAL', data: 'tel:5551234', package: 'com.google.android.dialer' }),
      ),
    ).not.toHaveProperty('error');
  });

  it('once the phone leaves the bridge it is no longer a bridge device: 503 {phone_connected: false}, and the check is false', async () => {
    app.stop();
    await app.closed;
    await new Promise((r) => setTimeout(r, 50));
    const st = await tool(relay, null, 'GET', '/bridge/status');
    expect([st.status, st.body.phone_connected]).toEqual([503, false]);
    expect(await checkRequirements(relay, token)).toBe(false);
  });
});
