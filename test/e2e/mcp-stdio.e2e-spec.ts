import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpSessions } from '../../apps/relay/src/mcp/mcp-sessions';
import { pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim, until } from '../support/bridge';
import { BIN, ensureBuilt } from '../support/dist';
import { textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

beforeAll(() => ensureBuilt(), 120_000);

/** `svc relay mcp` as a desktop client runs it: a child process on stdio, driven by the SDK's stdio client. */
describe('svc relay mcp (stdio)', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { mode: 'app' });
  });
  afterAll(async () => {
    phone?.stop();
    await relay.close();
  });

  /** The JSON a desktop client's `mcpServers` entry gives: the command, its arguments and its environment. */
  const launch = (env: Record<string, string>) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'relay', 'mcp'],
      env: { PATH: process.env.PATH!, RELAY_HOST: '127.0.0.1', RELAY_PORT: String(relay.port), ...env },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    return { transport, client, errors, stderr: () => stderr };
  };

  it('lists the relay’s tools, reads the screen and records the desktop client’s name; ends its relay session on exit', async () => {
    const { client, transport, errors } = launch({ MOBILE_BRIDGE_TOKEN: phone.token! });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(38);
    const r = (await client.callTool({ name: 'android_read_screen', arguments: {} })) as CallToolResult;
    expect(textOf(r).split('\n')).toContain('[w0:2] Button "Send" #send clickable @0,440-1080,560'); // the app's node ids (ScreenReader.kt:290)
    const blocked = (await client.callTool({ name: 'android_open_app', arguments: { package: 'com.squareup.cash' } })) as CallToolResult;
    expect(blocked).toMatchObject({ isError: true });
    expect(textOf(blocked)).toBe('blocked package com.squareup.cash');
    const sent = readEvents(relay.home)
      .filter((e) => e.type === 'bridge.command_sent')
      .at(-1)!;
    expect(sent.data).toMatchObject({ path: '/screen', via: 'mcp', client: 'stdio-e2e' });
    // Only JSON-RPC on stdout: the client saw no line it could not read.
    expect(errors).toEqual([]);
    const sessions = relay.app.get(McpSessions);
    expect(sessions.size).toBe(1);
    await client.close();
    await until(() => sessions.size === 0, 5000);
  });

  it('a screenshot comes back scaled to a long side of 2000 px, and a tap in its pixels reaches the phone in its own', async () => {
    const big = await startSim(relay, { mode: 'app', deviceName: 'Stdio Big', screen: { width: 1440, height: 3120 } });
    const { client, transport, errors } = launch({ MOBILE_BRIDGE_TOKEN: big.token! });
    try {
      await client.connect(transport);
      const r = (await client.callTool({ name: 'android_screenshot', arguments: { format: 'webp' } })) as CallToolResult;
      const image = r.content.find((c) => c.type === 'image') as { data: string; mimeType: string };
      expect(image.mimeType).toBe('image/webp');
      expect(await sharp(Buffer.from(image.data, 'base64')).metadata()).toMatchObject({ format: 'webp', width: 923, height: 2000 });
      expect(r.structuredContent).toMatchObject({ width: 923, height: 2000, phone_width: 1440, phone_height: 3120, scale: 2000 / 3120 });
      await client.callTool({ name: 'android_tap', arguments: { x: 500, y: 1000 } });
      const sent = big.received.filter((f) => f.type === 'bridge.command' && f.payload.path === '/tap').at(-1)!.payload.body;
      expect(sent).toMatchObject({ x: Math.round(500 / (2000 / 3120)), y: 1560 });
      // Evidence per action (issue 40, item 6) over stdio too: the tap's outcome carries the screen's hash before and
      // after (the sim's screen is static, so the same), in the same MCP session as the screenshot.
      const log = readEvents(relay.home).filter((e) => e.data.tokenPrefix === big.tokenPrefix);
      const [shot, tap] = ['/screenshot', '/tap'].map((p) => log.find((e) => e.type === 'bridge.command_sent' && e.data.path === p)!);
      expect(tap.data.session).toMatch(/^[0-9a-f]{12}$/);
      expect(shot.data.session).toBe(tap.data.session);
      const tapped = log.find((e) => e.type === 'bridge.command_answered' && e.data.requestId === tap.data.requestId)!;
      const evidence = tapped.data.evidence as { before: string; after: string };
      expect(evidence.before).toMatch(/^[0-9a-f]{64}$/);
      expect(evidence.after).toBe(evidence.before);
      expect(errors).toEqual([]);
    } finally {
      await client.close();
      big.stop();
    }
  });

  it('the element tools over stdio: the tree, a tap by ref that navigates, typing by query, a wait for what appears', async () => {
    const apps = await startSim(relay, { mode: 'app', ui: 'apps', deviceName: 'Stdio Apps', currentApp: 'com.android.launcher3', deliveryMs: 200 });
    const { client, transport, errors } = launch({ MOBILE_BRIDGE_TOKEN: apps.token! });
    type El = { ref: string; label: string | null; node: string; text: string | null };
    const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
    const elements = async () => ((await call('android_ui_tree')).structuredContent as { elements: El[] }).elements;
    try {
      await client.connect(transport);
      const launcher = await elements();
      const messages = launcher.find((e) => e.label === 'Messages' && e.text === 'Messages')!;
      expect(textOf(await call('android_ui_tree'))).toContain(`[${messages.ref}] text "Messages" #icon clickable longClickable @40,500-260,760`);
      expect((await call('android_tap', { ref: messages.ref })).isError).toBeFalsy();
      expect(apps.state.currentApp).toBe('com.google.android.apps.messaging');
      expect((await call('android_tap', { query: { text: 'Mum', role: 'text' } })).isError).toBeFalsy();
      expect((await call('android_type', { query: { text: 'Text message', role: 'input' }, text: 'Home soon' })).isError).toBeFalsy();
      expect((await elements()).find((e) => e.label === 'Text message')).toMatchObject({ text: 'Home soon' });
      expect((await call('android_tap', { query: { text: 'Send', role: 'button', exact: true } })).isError).toBeFalsy();
      const delivered = await call('android_wait_for', { text: 'Delivered', timeout_ms: 10_000, poll_ms: 50 });
      expect(delivered.structuredContent).toMatchObject({ met: true, element: { text: 'Delivered' } });
      const stale = await call('android_tap', { ref: messages.ref });
      expect(stale).toMatchObject({ isError: true, structuredContent: { code: 'mcp.stale_ref' } });
      expect(errors).toEqual([]);
    } finally {
      await client.close();
      apps.stop();
    }
  });

  it('a session the relay ended (idle, a restart) is opened again with the client’s own initialize, unseen by the client', async () => {
    const { client, transport, errors, stderr } = launch({ MOBILE_BRIDGE_TOKEN: phone.token! });
    await client.connect(transport);
    expect(((await client.callTool({ name: 'android_ping', arguments: {} })) as CallToolResult).isError).toBeFalsy();
    const sessions = relay.app.get(McpSessions);
    sessions.closeFor(phone.tokenPrefix!, 'test: as if idle');
    expect(sessions.size).toBe(0);
    const again = (await client.callTool({ name: 'android_current_app', arguments: {} })) as CallToolResult;
    expect(again.isError).toBeFalsy();
    expect(stderr()).toContain('the relay ended this MCP session (idle, or restarted): opening a new one');
    expect(sessions.size).toBe(1);
    const sent = readEvents(relay.home)
      .filter((e) => e.type === 'bridge.command_sent')
      .at(-1)!;
    expect(sent.data).toMatchObject({ path: '/current_app', via: 'mcp', client: 'stdio-e2e' });
    expect(errors).toEqual([]);
    await client.close();
    await until(() => sessions.size === 0, 5000);
  });

  it('SVC_RELAY_TOKEN works as well; a token without the bridge grant is refused in the relay’s words', async () => {
    const grantless = await pairPhone(relay, { terms: { grants: { bridge: false } } });
    const { client, transport, stderr } = launch({ SVC_RELAY_TOKEN: grantless.token });
    await expect(client.connect(transport)).rejects.toThrow('the relay refused: this session has no active "bridge" grant (auth.grant_required)');
    expect(stderr()).toContain('403');
    expect(stderr()).not.toContain(grantless.token);
    await client.close();
    grantless.phone.ws.close();
  });

  it('no token: exits 1 saying which variable to set, and writes nothing to stdout', async () => {
    const { client, transport, stderr } = launch({});
    await expect(client.connect(transport)).rejects.toThrow();
    await until(() => stderr().includes('MOBILE_BRIDGE_TOKEN'), 5000);
    expect(stderr()).toContain('set MOBILE_BRIDGE_TOKEN (or SVC_RELAY_TOKEN)');
    await client.close();
  });
});
