import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pairPhone, readEvents, startRelay, type Phone, type TestRelay } from '../support/harness';
import { dc, op, startSim } from '../support/bridge';
import { mcpConnect } from '../support/mcp';
import type { PhoneSim, SimHandler } from '../../apps/phone-sim/src/phone-sim';

/**
 * Evidence per action (issue 40, item 6), with the SDK's client over Streamable HTTP against the phone
 * simulator: a screen-changing tool call's `bridge.command_answered` carries the screen's hash before and
 * after (asked of the phone's own `/screen_hash`, which the app keeps out of its activity log as a trivial
 * read: BridgeCommandHandler.kt:207-219), reads carry none, a phone that cannot answer gives null hashes and
 * the command still succeeds; the console's playback lists the session's steps with thumbnails of its
 * screenshots while their media lives.
 */

/** The sim's screen is one static tree; this hash also follows the foreground app, so opening an app changes it. */
const foregroundHash: SimHandler = (cmd, sim) =>
  cmd.path === '/screen_hash'
    ? { status: 200, result: { hash: createHash('sha256').update(`${sim.phone.state.currentApp}|${sim.screenHash()}`).digest('hex'), node_count: 5 } }
    : null;
const hashOf = (sim: PhoneSim) => createHash('sha256').update(`${sim.phone.state.currentApp}|${sim.screenHash()}`).digest('hex');

describe('MCP evidence per action', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  let agent: { phone: Phone; token: string };
  let client: Client;
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { mode: 'app', deviceId: 'ev-phone', deviceName: 'Evidence Pixel', handlers: { '/screen_hash': foregroundHash } });
    agent = await pairPhone(relay, { device: { device_id: 'ev-agent', device_name: 'Agent' } });
    ({ client } = await mcpConnect(relay, agent.token, { name: 'evidence-agent' }));
  });
  afterAll(async () => {
    await client.close();
    phone.stop();
    agent.phone.close();
    await relay.close();
  });
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: { device: 'ev-phone', ...args } })) as CallToolResult;
  const answered = (requestId: string) => readEvents(relay.home).find((e) => e.type === 'bridge.command_answered' && e.data.requestId === requestId)!;
  const sentFor = (path: string) => readEvents(relay.home).filter((e) => e.type === 'bridge.command_sent' && e.data.path === path);

  it('a screen-changing call carries the hash before and after; a read carries none; the hash asks write no events', async () => {
    const home = hashOf(phone);
    const shot = await call('android_screenshot', { max_side: 200 });
    expect(shot.isError).toBeFalsy();
    const opened = await call('android_open_app', { package: 'com.android.chrome' });
    expect(opened.isError).toBeFalsy();
    const chrome = hashOf(phone);
    expect(chrome).not.toBe(home);
    await call('android_tap', { x: 10, y: 10, coordinates: 'phone' });
    await call('android_read_screen');

    const [open] = sentFor('/open_app');
    expect(open.data).toMatchObject({ via: 'mcp', client: 'evidence-agent', session: expect.stringMatching(/^[0-9a-f]{12}$/) });
    const openAnswer = answered(open.data.requestId as string);
    expect((openAnswer as { v?: number }).v).toBe(2);
    expect(openAnswer.data.evidence).toEqual({ before: home, after: chrome });
    const tapAnswer = answered(sentFor('/tap').at(-1)!.data.requestId as string);
    expect(tapAnswer.data.evidence).toEqual({ before: chrome, after: chrome });
    expect(answered(sentFor('/screen').at(-1)!.data.requestId as string).data.evidence).toBeNull();
    expect(answered(sentFor('/screenshot').at(-1)!.data.requestId as string).data.evidence).toBeNull();
    // The relay's own asks reach the phone (two per action) but are no commands of the log.
    expect(phone.received.filter((f) => f.type === 'bridge.command' && f.payload.path === '/screen_hash')).toHaveLength(4);
    expect(sentFor('/screen_hash')).toEqual([]);
    // One session name for the whole session.
    expect(new Set([open, ...sentFor('/tap'), ...sentFor('/screen')].map((e) => e.data.session)).size).toBe(1);
  });

  it('HTTP routes take no evidence under the default (mcp); RELAY_BRIDGE_EVIDENCE=all gives them some', async () => {
    const http = await dc(relay, phone.token!, 'POST', '/press_key', { key: 'home' });
    expect(http.status).toBe(200);
    expect(answered(sentFor('/press_key').at(-1)!.data.requestId as string).data.evidence).toBeNull();
    const all = await startRelay({ env: { RELAY_BRIDGE_EVIDENCE: 'all' } });
    const sim = await startSim(all, { mode: 'app', handlers: { '/screen_hash': foregroundHash } });
    try {
      expect((await dc(all, sim.token!, 'POST', '/press_key', { key: 'home' })).status).toBe(200);
      const sent = readEvents(all.home).filter((e) => e.type === 'bridge.command_sent' && e.data.path === '/press_key');
      const ans = readEvents(all.home).find((e) => e.type === 'bridge.command_answered' && e.data.requestId === sent[0].data.requestId)!;
      expect(ans.data.evidence).toEqual({ before: hashOf(sim), after: hashOf(sim) });
    } finally {
      sim.stop();
      await all.close();
    }
  });

  it('a phone that cannot give the hash (no such route; silent) gives null hashes, and the command still succeeds', async () => {
    const old = await startSim(relay, {
      mode: 'app',
      deviceId: 'old-phone',
      handlers: { '/screen_hash': (cmd) => (cmd.path === '/screen_hash' ? { status: 404, result: { error: 'Unknown path: /screen_hash' } } : null) },
    });
    const silent = await startSim(relay, {
      mode: 'app',
      deviceId: 'silent-phone',
      handlers: { '/screen_hash': (cmd) => (cmd.path === '/screen_hash' ? new Promise<null>(() => undefined) : null) },
    });
    try {
      for (const device of ['old-phone', 'silent-phone']) {
        const r = await call('android_press_key', { key: 'back', device });
        expect(r.isError).toBeFalsy();
        const sim = device === 'old-phone' ? old : silent;
        const sent = readEvents(relay.home).filter((e) => e.type === 'bridge.command_sent' && e.data.tokenPrefix === sim.tokenPrefix);
        expect(answered(sent.at(-1)!.data.requestId as string).data).toMatchObject({ status: 200, evidence: { before: null, after: null } });
      }
    } finally {
      old.stop();
      silent.stop();
    }
  }, 20_000);

  it('no hash is asked while a blocklisted app is in front (its screen is read in no form): null hashes', async () => {
    const bank = await startSim(relay, {
      mode: 'app',
      deviceId: 'bank-phone',
      currentApp: 'com.paypal.android.p2pmobile',
      handlers: { '/screen_hash': foregroundHash },
    });
    try {
      // A key press passes the relay's foreground gate (it moves away from the app), so it goes to the phone, whose
      // own safety refuses it there (as the app's does: app-safety.ts); either way the relay asked no hash.
      const r = await call('android_press_key', { key: 'home', device: 'bank-phone' });
      expect(r).toMatchObject({ isError: true, structuredContent: { status: 403 } });
      const sent = readEvents(relay.home).filter((e) => e.type === 'bridge.command_sent' && e.data.tokenPrefix === bank.tokenPrefix);
      expect(answered(sent.at(-1)!.data.requestId as string).data.evidence).toEqual({ before: null, after: null });
      expect(bank.received.filter((f) => f.type === 'bridge.command').map((f) => f.payload.path)).toEqual(['/press_key']);
    } finally {
      bank.stop();
    }
  });

  it('a named secret’s typing takes no evidence: a hash over the field could be matched against guesses', async () => {
    expect((await op(relay, 'POST', '/console/api/secrets', { name: 'pin', value: '4711' })).status).toBe(200);
    const hashes = () => phone.received.filter((f) => f.type === 'bridge.command' && f.payload.path === '/screen_hash').length;
    const before = hashes();
    const r = await call('android_type_secret', { name: 'pin' });
    expect(r.isError).toBeFalsy();
    expect(answered(sentFor('/type').at(-1)!.data.requestId as string).data.evidence).toBeNull();
    expect(hashes()).toBe(before);
  });

  it('the console plays the session back: its steps, the evidence, and thumbnails while the screenshot lives', async () => {
    const list = await op(relay, 'GET', '/console/api/bridge/trails');
    expect(list.status).toBe(200);
    expect(list.body.evidence).toBe('mcp');
    const session = sentFor('/open_app')[0].data.session as string;
    const row = (list.body.trails as Array<Record<string, any>>).find((t) => t.session === session)!;
    expect(row).toMatchObject({ client: 'evidence-agent', token_prefix: phone.tokenPrefix, device_name: 'Evidence Pixel', dropped: 0 });
    const trail = await op(relay, 'GET', `/console/api/bridge/trails/${session}`);
    expect(trail.status).toBe(200);
    const steps = trail.body.steps as Array<Record<string, any>>;
    expect(steps.slice(0, 4).map((s) => s.path)).toEqual(['/screenshot', '/open_app', '/tap', '/screen']);
    const open = steps[1];
    expect(open).toMatchObject({ outcome: 'answered', status: 200, shape: { package: 'com.android.chrome' }, evidence: { changed: true } });
    expect(steps[2].evidence).toMatchObject({ changed: false });
    expect(steps[3].evidence).toBeNull();
    expect(open.shot_before).toMatchObject({ request_id: steps[0].request_id, media: expect.stringMatching(/^[\w-]{8}$/) });
    expect(open.shot_after).toBeNull();
    // No token in what the console reads: the media is named by its entry's prefix only.
    expect(JSON.stringify(trail.body)).not.toContain(agent.token);
    const thumb = await fetch(`${relay.url}/console/api/bridge/trails/thumbnail/${open.shot_before.media}`, { headers: relay.op });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect(meta.format).toBe('jpeg');
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(240);
    // Hostile or unknown names: 4xx in the relay's shape.
    expect(await op(relay, 'GET', '/console/api/bridge/trails/not-a-session')).toMatchObject({ status: 400, body: { ok: false } });
    expect(await op(relay, 'GET', '/console/api/bridge/trails/0123456789ab')).toMatchObject({ status: 404, body: { code: 'bridge.unknown_trail' } });
    expect((await fetch(`${relay.url}/console/api/bridge/trails/thumbnail/..%2f..%2fx`, { headers: relay.op })).status).toBe(400);
    // Without the operator's key: refused.
    expect((await fetch(`${relay.url}/console/api/bridge/trails`)).status).toBe(401);
    // Once the screenshot's media expired, the step says so (the page shows "media expired").
    relay.clock.advanceSeconds(86_400 * 2);
    await relay.sweep();
    const later = await op(relay, 'GET', `/console/api/bridge/trails/${session}`);
    expect((later.body.steps as Array<Record<string, any>>)[1].shot_before).toMatchObject({ request_id: steps[0].request_id, media: null });
    expect((await fetch(`${relay.url}/console/api/bridge/trails/thumbnail/${open.shot_before.media}`, { headers: relay.op })).status).toBe(404);
  });
});
