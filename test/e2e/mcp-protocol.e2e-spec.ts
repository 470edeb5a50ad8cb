import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { startRelay, type TestRelay } from '../support/harness';
import { startSim } from '../support/bridge';
import { mcpConnect } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/**
 * The protocol's side of `/mcp` (issue 40, item 7), as the SDK's own client sees it: the four hints on every
 * tool, with the values docs/PROTOCOL.md (MCP, "Tool hints") tables; an outputSchema where the relay answers
 * with data of its own, and that data valid against it by the SDK's own validator; the newest revision.
 */
describe('MCP protocol: hints, output schemas, revision', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { mode: 'app' });
  });
  afterAll(async () => {
    phone.stop();
    await relay.close();
  });

  const READ_ONLY = [
    'android_clipboard_read',
    'android_current_app',
    'android_describe_node',
    'android_diff_screen',
    'android_events',
    'android_find_nodes',
    'android_get_apps',
    'android_location',
    'android_ping',
    'android_read_screen',
    'android_screen_hash',
    'android_screenshot',
    'android_ui_tree',
    'android_wait_for',
  ];
  /** Those the safety pipeline may stop for the user's confirmation. */
  const DESTRUCTIVE = [
    'android_call',
    'android_send_sms',
    'android_tap',
    'android_tap_text',
    'android_long_press',
    'android_type',
    'android_type_secret',
  ];
  const IDEMPOTENT = [...READ_ONLY, 'android_clipboard_write', 'android_event_stream', 'android_open_app', 'android_return_to_svc', 'android_wait'];
  const CLOSED_WORLD = [
    'android_ping',
    'android_setup',
    'android_current_app',
    'android_screen_hash',
    'android_diff_screen',
    'android_get_apps',
    'android_press_key',
    'android_wait',
    'android_clipboard_write',
    'android_media',
    'android_event_stream',
    'android_location',
    'android_return_to_svc',
  ];

  it('negotiates the SDK’s newest protocol revision and gives every tool all four hints, as PROTOCOL.md tables them', async () => {
    const { client, transport } = await mcpConnect(relay, phone.token!);
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(38);
    for (const t of tools) {
      expect([t.name, t.annotations]).toEqual([
        t.name,
        {
          readOnlyHint: READ_ONLY.includes(t.name),
          destructiveHint: DESTRUCTIVE.includes(t.name),
          idempotentHint: IDEMPOTENT.includes(t.name),
          openWorldHint: !CLOSED_WORLD.includes(t.name),
        },
      ]);
    }
    await client.close();
  });

  it('the screenshot declares an outputSchema; its structured content, and a refusal’s, validate against it with the SDK’s validator', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const { tools } = await client.listTools();
    const withSchema = tools.filter((t: Tool) => t.outputSchema).map((t) => t.name);
    expect(withSchema).toEqual(['android_ui_tree', 'android_wait_for', 'android_screenshot', 'android_hand_over']);
    const validate = new AjvJsonSchemaValidator().getValidator(tools.find((t) => t.name === 'android_screenshot')!.outputSchema!);
    // The SDK's client checks each answer against the schema itself (callTool throws on a mismatch): this says so outright.
    const r = (await client.callTool({ name: 'android_screenshot', arguments: { format: 'png', max_side: 300 } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(validate(r.structuredContent)).toMatchObject({ valid: true });
    expect(validate({ ...r.structuredContent, scale: 2 })).toMatchObject({ valid: false });
    expect(validate({ width: 1 })).toMatchObject({ valid: false });
    phone.handlers['/screenshot'] = () => ({ status: 500, result: { error: 'the screen is off' } });
    try {
      const refused = (await client.callTool({ name: 'android_screenshot', arguments: {} })) as CallToolResult;
      expect(refused).toMatchObject({ isError: true, structuredContent: { ok: false, error: 'the screen is off' } });
      expect(validate(refused.structuredContent)).toMatchObject({ valid: true });
    } finally {
      delete phone.handlers['/screenshot'];
    }
    await client.close();
  });

  it('the element tree and wait_for declare outputSchemas their answers and refusals validate against (issue 40, item 2)', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const { tools } = await client.listTools();
    const validator = (name: string) => new AjvJsonSchemaValidator().getValidator(tools.find((t) => t.name === name)!.outputSchema!);
    const tree = (await client.callTool({ name: 'android_ui_tree', arguments: {} })) as CallToolResult;
    expect(validator('android_ui_tree')(tree.structuredContent)).toMatchObject({ valid: true });
    expect(validator('android_ui_tree')({ total: 1, shown: 1, cut: false, elements: [{ ref: 'nope' }] })).toMatchObject({ valid: false });
    const send = (tree.structuredContent as { elements: Array<{ label: string }> }).elements.find((e) => e.label === 'Send');
    const found = (await client.callTool({ name: 'android_wait_for', arguments: { text: 'Send' } })) as CallToolResult;
    expect(found.structuredContent).toMatchObject({ met: true, element: send });
    expect(validator('android_wait_for')(found.structuredContent)).toMatchObject({ valid: true });
    const timedOut = (await client.callTool({
      name: 'android_wait_for',
      arguments: { text: 'Nowhere', timeout_ms: 100, poll_ms: 50 },
    })) as CallToolResult;
    expect(timedOut).toMatchObject({ isError: true, structuredContent: { ok: false, code: 'mcp.wait_timeout' } });
    expect(validator('android_wait_for')(timedOut.structuredContent)).toMatchObject({ valid: true });
    await client.close();
  });
});
