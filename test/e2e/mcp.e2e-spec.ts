import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { op, startSim } from '../support/bridge';
import { initializeBody, mcpConnect, mcpPost, textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

/**
 * `/mcp` (issue 25) with the MCP SDK's own client over Streamable HTTP, against a real relay and phones
 * shaped like the Android app: the tools, what their answers look like, the safety pipeline's refusals as
 * tool errors, the credential, `device`, and the record.
 */
describe('MCP over Device Control', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  const sims: PhoneSim[] = [];
  const sim = async (o: Parameters<typeof startSim>[1] = {}) => {
    const s = await startSim(relay, { mode: 'app', ...o });
    sims.push(s);
    return s;
  };
  beforeAll(async () => {
    relay = await startRelay();
    phone = await sim({ deviceName: 'Pixel Main' });
  });
  afterAll(async () => {
    for (const s of sims) s.stop();
    await relay.close();
  });
  const events = (type: string) => readEvents(relay.home).filter((e) => e.type === type);
  const commandsOf = (s: PhoneSim) => s.received.filter((f) => f.type === 'bridge.command').map((f) => f.payload.path);

  it('lists one tool per Device Control route, named as the host tools, with input schemas from the routes’ DTOs', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    // plugin/tools/android_tool.py names, plus android_setup; spec 4.9's 34 routes, /clipboard as read and write, /apps an alias.
    expect(names).toEqual(
      [
        'android_broadcast',
        'android_call',
        'android_clipboard_read',
        'android_clipboard_write',
        'android_current_app',
        'android_describe_node',
        'android_diff_screen',
        'android_drag',
        'android_event_stream',
        'android_events',
        'android_find_nodes',
        'android_get_apps',
        'android_location',
        'android_long_press',
        'android_media',
        'android_open_app',
        'android_ping',
        'android_press_key',
        'android_read_screen',
        'android_return_to_svc',
        'android_scroll',
        'android_screen_hash',
        'android_screenshot',
        'android_search_contacts',
        'android_send_intent',
        'android_send_mms',
        'android_send_sms',
        'android_setup',
        'android_share_media',
        'android_swipe',
        'android_tap',
        'android_tap_text',
        'android_type',
        'android_ui_tree',
        'android_wait',
        'android_wait_for',
        // issue 40 items 3 and 5: no route of their own (mcp/mcp-human-tools.ts).
        'android_type_secret',
        'android_hand_over',
      ].sort(),
    );
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('android_tap_text')!.inputSchema).toMatchObject({
      type: 'object',
      required: ['text'],
      properties: { text: { type: 'string', minLength: 1, maxLength: 500 }, exact: { type: 'boolean' }, device: { type: 'string' } },
    });
    expect(byName.get('android_press_key')!.inputSchema.properties!.key).toMatchObject({ enum: expect.arrayContaining(['back', 'home']) });
    expect(byName.get('android_read_screen')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('android_send_sms')!.annotations).toMatchObject({ readOnlyHint: false });
    // Nested DTOs travel with the tool; no reference points outside it.
    const share = JSON.stringify(byName.get('android_share_media')!.inputSchema);
    expect(share).toContain('"$ref":"#/$defs/AttachmentDto"');
    for (const t of tools) {
      const schema = t.inputSchema as { $defs?: Record<string, unknown> };
      for (const [, ref] of JSON.stringify(schema).matchAll(/"\$ref":"#\/\$defs\/(\w+)"/g)) expect(schema.$defs?.[ref]).toBeDefined();
      expect(t.description!.length).toBeGreaterThan(40);
    }
    await client.close();
  });

  it('reads the screen as compact text: one line per node an agent can use', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const r = (await client.callTool({ name: 'android_read_screen', arguments: { include_bounds: false } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const lines = textOf(r).split('\n');
    // The app lists only nodes with text, a description or an action, as w<window>:<n> (ScreenReader.kt:256-300).
    expect(lines[0]).toBe('com.android.launcher3: 5 nodes');
    expect(lines).toContain('[w0:2] Button "Send" #send clickable');
    expect(lines).toContain('[w0:1] EditText (Message) #compose clickable editable focused');
    const found = (await client.callTool({ name: 'android_find_nodes', arguments: { text: 'send' } })) as CallToolResult;
    expect(textOf(found)).toMatch(/^1 matching nodes\n\[w0:2\] Button "Send" #send clickable @0,440-1080,560$/);
    await client.close();
  });

  it('a screenshot is MCP image content with its media token, which holds the phone’s full-size PNG', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const r = (await client.callTool({ name: 'android_screenshot', arguments: { format: 'png' } })) as CallToolResult;
    const image = r.content.find((c) => c.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    const png = Buffer.from((image as { data: string }).data, 'base64');
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
    const meta = JSON.parse(textOf(r)) as Record<string, any>;
    expect(meta).toMatchObject({ token: expect.any(String), format: 'png', bytes: png.length, phone_width: 54, phone_height: 96, scale: 1 });
    expect(meta).not.toHaveProperty('image');
    // Scaling is mcp-screens.e2e-spec.ts's; the token is the phone's own image as it sent it.
    const media = Buffer.from(await (await fetch(`${relay.url}/media/${meta.token}`, { headers: bearer(phone.token!) })).arrayBuffer());
    expect([media.readUInt32BE(16), media.readUInt32BE(20)]).toEqual([54, 96]); // the simulator's default thumbnail
    await client.close();
  });

  it('refusals are tool errors in the relay’s words: blocked package, master toggle off, user denied, bad input', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const before = commandsOf(phone).length;
    const blocked = (await client.callTool({ name: 'android_open_app', arguments: { package: 'com.chase.sig.android' } })) as CallToolResult;
    expect(blocked).toMatchObject({
      isError: true,
      structuredContent: { ok: false, code: 'bridge.blocked_package', package: 'com.chase.sig.android' },
    });
    expect(textOf(blocked)).toBe('blocked package com.chase.sig.android');
    expect(commandsOf(phone).length).toBe(before); // never reached the phone

    phone.confirm = 'deny';
    const denied = (await client.callTool({ name: 'android_tap_text', arguments: { text: 'Send' } })) as CallToolResult;
    expect(denied.isError).toBe(true);
    // The app's own words (BridgeCommandHandler.kt:651-657, 2177-2200).
    expect(textOf(denied)).toMatch(
      /^The user denied a destructive '\/tap_text' action via the on-device confirmation modal\. \(Text inspected: "Send"\) This is a FINAL denial\./,
    );
    expect(phone.modalAsked.at(-1)).toEqual({ path: '/tap_text', text: 'Send' });
    phone.confirm = 'allow';

    const bad = (await client.callTool({ name: 'android_tap_text', arguments: { exact: 'yes' } })) as CallToolResult;
    expect(bad).toMatchObject({ isError: true, structuredContent: { code: 'validation_failed' } });
    expect(textOf(bad)).toContain('text must be');
    expect(textOf((await client.callTool({ name: 'android_nope', arguments: {} })) as CallToolResult)).toContain('unknown tool android_nope');

    const off = await sim({ masterEnabled: false });
    const r = (await client.callTool({ name: 'android_tap', arguments: { x: 1, y: 1, device: off.opts.deviceId! } })) as CallToolResult;
    expect(r).toMatchObject({ isError: true, structuredContent: { code: 'bridge.master_disabled' } });
    expect(textOf(r)).toBe('Device Control is switched off on the phone');
    off.stop();
    await client.close();
  });

  it('a relay-side confirmation denied by the phone’s user (a phone that answers bridge.confirm)', async () => {
    const legacy = await sim({ mode: 'legacy', confirm: 'deny' });
    const { client } = await mcpConnect(relay, legacy.token!);
    const r = (await client.callTool({
      name: 'android_send_sms',
      arguments: { to: '+1 202 555 0142', body: 'hi', device: legacy.opts.deviceId! },
    })) as CallToolResult;
    expect(r).toMatchObject({ isError: true, structuredContent: { code: 'bridge.confirmation_denied' } });
    expect(textOf(r)).toBe('user denied destructive action');
    expect(commandsOf(legacy)).toEqual([]);
    legacy.stop();
    await client.close();
  });

  it('two phones: `device` picks one by device_id, token prefix or name; without it the call is ambiguous', async () => {
    const second = await sim({ deviceName: 'Tablet' });
    const { client } = await mcpConnect(relay, phone.token!);
    const n = { main: commandsOf(phone).length, second: commandsOf(second).length };
    for (const device of [second.opts.deviceId!, second.tokenPrefix!, 'tablet']) {
      const r = (await client.callTool({ name: 'android_ping', arguments: { device } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
    }
    expect(commandsOf(second).length).toBe(n.second + 3);
    expect(commandsOf(phone).length).toBe(n.main);
    // The caller's own phone is the default among several.
    await client.callTool({ name: 'android_ping', arguments: {} });
    expect(commandsOf(phone).length).toBe(n.main + 1);
    const other = await pairPhone(relay, { terms: { grants: { bridge: null } } });
    const { client: agent } = await mcpConnect(relay, other.token);
    const ambiguous = (await agent.callTool({ name: 'android_ping', arguments: {} })) as CallToolResult;
    expect(ambiguous).toMatchObject({ isError: true, structuredContent: { code: 'bridge.device_ambiguous' } });
    const unknown = (await agent.callTool({ name: 'android_ping', arguments: { device: 'no-such-phone' } })) as CallToolResult;
    expect(unknown).toMatchObject({ isError: true, structuredContent: { code: 'bridge.device_not_found' } });
    second.stop();
    other.phone.ws.close();
    await Promise.all([client.close(), agent.close()]);
  });

  it('records every MCP command like an HTTP one, with via mcp and the client’s name; the console shows it', async () => {
    const { client } = await mcpConnect(relay, phone.token!, {
      name: 'Claude <Desktop>\u0000 with a very long name that keeps going and going past sixty-four',
    });
    await client.callTool({ name: 'android_tap', arguments: { x: 10, y: 20 } });
    await client.callTool({ name: 'android_open_app', arguments: { package: 'com.paypal.android.p2pmobile' } });
    const sent = events('bridge.command_sent').at(-1)!;
    expect(sent.data).toMatchObject({
      path: '/tap',
      shape: { x: 10, y: 20 },
      via: 'mcp',
      client: expect.stringMatching(/^Claude _Desktop_ with a very long/),
    });
    expect((sent.data.client as string).length).toBe(64);
    const refused = events('bridge.safety_decided').at(-1)!;
    expect(refused.data).toMatchObject({ decision: 'blocked_package', via: 'mcp', client: sent.data.client });
    expect(refused.actor).toBe(`device:${phone.tokenPrefix}`);
    // An HTTP command carries no via.
    const http = await fetch(`${relay.url}/ping`, { headers: bearer(phone.token!) });
    expect(http.status).toBe(200);
    expect(events('bridge.command_sent').at(-1)!.data).not.toHaveProperty('via');
    const view = await op(relay, 'GET', '/console/api/bridge');
    const rows = view.body.activity as Array<Record<string, unknown>>;
    expect(rows.find((a) => a.request_id === sent.data.requestId)).toMatchObject({ via: 'mcp', client: sent.data.client });
    expect(rows[0]).not.toHaveProperty('via');
    expect((view.body.safety as Array<Record<string, unknown>>)[0]).toMatchObject({ decision: 'blocked_package', via: 'mcp' });
    await client.close();
  });

  it('resources: the paired phones with their Device Control state, and the recent safety decisions', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['device-control://phones', 'device-control://safety-decisions']);
    const read = async (uri: string) => {
      const [c] = ((await client.readResource({ uri })) as ReadResourceResult).contents;
      return JSON.parse('text' in c ? c.text : '');
    };
    const phones = await read('device-control://phones');
    const me = phones.phones.find((p: any) => p.token_prefix === phone.tokenPrefix);
    expect(me).toMatchObject({
      device_name: 'Pixel Main',
      on_bridge: true,
      device_control: { master_enabled: true, current_app: expect.any(String) },
    });
    expect(JSON.stringify(phones)).not.toContain(phone.token!);
    const decisions = await read('device-control://safety-decisions');
    expect(decisions.decisions[0]).toMatchObject({ decision: expect.any(String), reason: expect.any(String) });
    await expect(client.readResource({ uri: 'device-control://nothing' })).rejects.toThrow(/no resource device-control:\/\/nothing/);
    await client.close();
  });

  it('needs a session bearer with an active bridge grant: none is 401, grant-less 403, in the relay’s error shape', async () => {
    const none = await mcpPost(relay, initializeBody());
    expect(none).toMatchObject({ status: 401, body: { ok: false, code: 'auth.missing_bearer' } });
    const bad = await mcpPost(relay, initializeBody(), bearer('x'.repeat(40)));
    expect(bad).toMatchObject({ status: 401, body: { ok: false, code: 'auth.invalid_token' } });
    const grantless = await pairPhone(relay, { terms: { grants: { bridge: false } } });
    const refused = await mcpPost(relay, initializeBody(), bearer(grantless.token));
    expect(refused).toMatchObject({
      status: 403,
      body: { ok: false, code: 'auth.grant_required', error: 'this session has no active "bridge" grant' },
    });
    const sdk = await mcpConnect(relay, grantless.token).catch((e: unknown) => e);
    expect(sdk).toBeInstanceOf(StreamableHTTPError);
    expect((sdk as StreamableHTTPError).code).toBe(403);
    grantless.phone.ws.close();
  });

  it('no phone on the bridge: the tool error says so', async () => {
    const empty = await startRelay();
    try {
      const paired = await pairPhone(empty, { terms: { grants: { bridge: null } } });
      const { client } = await mcpConnect(empty, paired.token);
      const r = (await client.callTool({ name: 'android_ping', arguments: {} })) as CallToolResult;
      expect(r).toMatchObject({ isError: true, structuredContent: { code: 'bridge.no_device' } });
      expect(textOf(r)).toBe('no phone is connected to the bridge');
      await client.close();
      paired.phone.ws.close();
    } finally {
      await empty.close();
    }
  });
});
