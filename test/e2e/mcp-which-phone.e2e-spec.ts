import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { pairPhone, startRelay, type Phone, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { fetchFrom } from '../support/elsewhere';
import { mcpConnect, textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/**
 * Which phone (issue 40, item 4), with the SDK's client over Streamable HTTP: every tool takes `device`, an
 * agent on the relay's host drives two simulated phones by it, a selector that names none or several is a
 * tool error naming the phones to pick from (device_id and name, never a token), and the phones resource
 * lists the phones this session may drive with their state (from another machine: its own alone, the rule of
 * libs/domain bridge-authority.ts). The host tools pick a phone per call the same way (`device`,
 * plugin/tools/android_tool.py:101-135).
 */
describe('MCP: which phone', () => {
  let relay: TestRelay;
  let kitchen: PhoneSim;
  let garage: PhoneSim;
  let agent: { phone: Phone; token: string; prefix: string };
  let client: Client;
  beforeAll(async () => {
    relay = await startRelay();
    kitchen = await startSim(relay, { mode: 'app', deviceId: 'kitchen-1', deviceName: 'Shared Pixel', currentApp: 'com.android.launcher3' });
    garage = await startSim(relay, { mode: 'app', deviceId: 'garage-1', deviceName: 'Shared Pixel', masterEnabled: false });
    // An agent's own session (a desktop's, with the bridge grant): it is neither phone, so neither is its default.
    agent = await pairPhone(relay, { device: { device_id: 'agent-desk', device_name: 'Agent desk' } });
    ({ client } = await mcpConnect(relay, agent.token));
  });
  afterAll(async () => {
    await client.close();
    kitchen.stop();
    garage.stop();
    agent.phone.close();
    await relay.close();
  });
  const paths = (s: PhoneSim) => s.received.filter((f) => f.type === 'bridge.command').map((f) => f.payload.path as string);
  const phonesOf = async (c: Client) => {
    const res = (await c.readResource({ uri: 'device-control://phones' })) as ReadResourceResult;
    return JSON.parse((res.contents[0] as { text: string }).text) as { phones: Array<Record<string, any>>; active: string | null };
  };

  it('every tool’s input schema takes an optional `device`', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(34);
    const without = tools.filter((t) => (t.inputSchema.properties as Record<string, { type?: string }> | undefined)?.device?.type !== 'string');
    expect(without.map((t) => t.name)).toEqual([]);
    const requiring = tools.filter((t) => (t.inputSchema.required ?? []).includes('device'));
    expect(requiring.map((t) => t.name)).toEqual([]);
  });

  it('drives two phones by device_id, one call each, and each phone gets only its own', async () => {
    const [k, g] = [paths(kitchen).length, paths(garage).length];
    const opened = (await client.callTool({
      name: 'android_open_app',
      arguments: { package: 'com.android.chrome', device: 'kitchen-1' },
    })) as CallToolResult;
    expect(opened.isError).toBeFalsy();
    const pinged = (await client.callTool({ name: 'android_ping', arguments: { device: 'garage-1' } })) as CallToolResult;
    expect(pinged.isError).toBeFalsy();
    expect(
      paths(kitchen)
        .slice(k)
        .filter((p) => p !== '/screen_hash'),
    ).toEqual(['/open_app']);
    expect(paths(garage).slice(g)).toEqual(['/ping']);
    // And by token prefix: the resource gives it, the agent uses it.
    const byPrefix = (await client.callTool({ name: 'android_current_app', arguments: { device: kitchen.tokenPrefix! } })) as CallToolResult;
    expect(JSON.parse(textOf(byPrefix))).toMatchObject({ package: 'com.android.chrome' });
  });

  it('a selector matching several or none is a tool error naming the choices by device_id and name, without tokens', async () => {
    const several = (await client.callTool({ name: 'android_ping', arguments: { device: 'shared pixel' } })) as CallToolResult;
    expect(several).toMatchObject({ isError: true, structuredContent: { code: 'bridge.device_ambiguous', matches: 2 } });
    const choices = (several.structuredContent as { choices: unknown[] }).choices;
    expect(choices).toEqual(
      expect.arrayContaining([
        { device_id: 'kitchen-1', device_name: 'Shared Pixel' },
        { device_id: 'garage-1', device_name: 'Shared Pixel' },
      ]),
    );
    expect(textOf(several)).toMatch(/2 phones match "shared pixel": .*device_id kitchen-1.*; use a device_id/);
    const none = (await client.callTool({ name: 'android_tap', arguments: { x: 1, y: 1, device: 'attic' } })) as CallToolResult;
    expect(none).toMatchObject({ isError: true, structuredContent: { code: 'bridge.device_not_found' } });
    expect(textOf(none)).toContain('the phones on the bridge: ');
    expect(textOf(none)).toContain('device_id garage-1');
    // No selector, no active phone, and the agent's own session is no phone: as ambiguous, with the same choices.
    const unnamed = (await client.callTool({ name: 'android_ping', arguments: {} })) as CallToolResult;
    expect(unnamed).toMatchObject({ isError: true, structuredContent: { code: 'bridge.device_ambiguous', choices: expect.any(Array) } });
    for (const r of [several, none, unnamed]) {
      const all = JSON.stringify(r);
      for (const s of [kitchen, garage]) {
        expect(all).not.toContain(s.token!);
        expect(all).not.toContain(s.tokenPrefix!);
      }
    }
  });

  it('the phones resource shows the phones this session may drive, with their state', async () => {
    const { phones } = await phonesOf(client);
    const byId = Object.fromEntries(phones.map((p) => [p.device_id, p]));
    expect(byId['kitchen-1']).toMatchObject({
      device_name: 'Shared Pixel',
      token_prefix: kitchen.tokenPrefix,
      on_bridge: true,
      device_control: { master_enabled: true, current_app: 'com.android.chrome', online: true },
    });
    expect(byId['garage-1']).toMatchObject({ on_bridge: true, device_control: { master_enabled: false } });
    // The agent's own session holds the bridge grant but is on no bridge: listed, without Device Control state.
    expect(byId['agent-desk']).toMatchObject({ on_bridge: false, device_control: null });
    // The same token from another machine may drive its own session’s phone only: it lists that alone.
    const elsewhere = await mcpConnect(relay, agent.token, { fetch: fetchFrom() });
    expect((await phonesOf(elsewhere.client)).phones.map((p) => p.device_id)).toEqual(['agent-desk']);
    const kitchenOwn = await mcpConnect(relay, kitchen.token!, { fetch: fetchFrom() });
    expect((await phonesOf(kitchenOwn.client)).phones.map((p) => p.device_id)).toEqual(['kitchen-1']);
    await Promise.all([elsewhere.client.close(), kitchenOwn.client.close()]);
  });
});
