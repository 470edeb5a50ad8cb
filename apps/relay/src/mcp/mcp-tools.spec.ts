import 'reflect-metadata';
import { clientNames, DEVICE_CONTROL_ROUTES, DomainError } from '@svc/domain';
import { errorResult, nodesText, screenText, toolResult } from './mcp-results';
import { McpToolSet } from './mcp-tool-set';
import { isReadOnly, toolRoutes } from './mcp-tools';
import { clientName } from './mcp-server';
import { TapDto } from '../bridge/device-control-gestures.dto';

describe('MCP tools', () => {
  it('cover every Device Control route of spec 4.9, each with a method the route has, under unique names', () => {
    const tools = toolRoutes(clientNames('svc'));
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    for (const t of tools) expect(DEVICE_CONTROL_ROUTES.find((r) => r.path === t.path)?.methods).toContain(t.method);
    const covered = new Set(tools.map((t) => `${t.method} ${t.path}`));
    const missing = DEVICE_CONTROL_ROUTES.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)).filter((k) => !covered.has(k));
    // /return_to_svc answers GET and POST alike: one tool (POST, as the host's tool sends it).
    expect(missing).toEqual(['GET /return_to_svc']);
  });

  it('spell the return-to-app tool as the relay’s clients do (RELAY_CLIENT_SPELLING)', () => {
    expect(toolRoutes(clientNames('svc')).map((t) => t.name)).toContain('android_return_to_svc');
    const hermes = toolRoutes(clientNames('hermes'));
    expect(hermes.map((t) => t.name)).toContain('android_return_to_hermes');
    expect(hermes.find((t) => t.name === 'android_return_to_hermes')!.description).toContain('Hermes app');
  });

  it('mark reads read-only and nothing that acts', () => {
    const ro = toolRoutes(clientNames('svc'))
      .filter(isReadOnly)
      .map((t) => t.name)
      .sort();
    expect(ro).toEqual(
      [
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
      ].sort(),
    );
  });

  it('take the input schemas of the HTTP routes’ DTOs, self-contained, with the relay’s own rules translated', () => {
    const set = new McpToolSet(clientNames('svc'));
    const byName = new Map(set.list().map((t) => [t.name, t.inputSchema as Record<string, any>]));
    expect(byName.get('android_tap')!.properties.nodeId).toEqual({
      oneOf: [
        { type: 'string', minLength: 1, maxLength: 128 },
        { type: 'integer', minimum: 0 },
      ],
    });
    expect(byName.get('android_open_app')).toMatchObject({ required: ['package'], properties: { package: { type: 'string', maxLength: 255 } } });
    // The data-less POSTs take selectors only, none required.
    expect(byName.get('android_return_to_svc')).toEqual({
      type: 'object',
      properties: { device: { type: 'string', minLength: 1, maxLength: 128 }, device_id: { type: 'string', minLength: 1, maxLength: 128 } },
    });
    expect(byName.get('android_ping')).toMatchObject({ type: 'object', properties: { device: { type: 'string' } } });
    expect(byName.get('android_ping')).not.toHaveProperty('required');
    for (const [name, schema] of byName) {
      const text = JSON.stringify(schema);
      for (const [, ref] of text.matchAll(/"\$ref":"#\/\$defs\/(\w+)"/g)) expect([name, schema.$defs?.[ref]]).toEqual([name, expect.any(Object)]);
      expect([name, text]).not.toEqual([name, expect.stringContaining('#/components')]);
      expect(schema.properties.device).toBeDefined();
    }
    expect(byName.get('android_send_mms')!.$defs.AttachmentDto.properties.path).toMatchObject({ type: 'string', maxLength: 4096 });
  });

  it('check arguments with the same DTOs: an unknown tool has no entry, a known one its route’s input class', () => {
    const set = new McpToolSet(clientNames('svc'));
    // A gesture's MCP input is its route's DTO with `coordinates` (mcp-inputs.dto.ts).
    expect(set.get('android_tap')!.input.name).toBe('TapToolInput');
    expect(new (set.get('android_tap')!.input)()).toBeInstanceOf(TapDto);
    expect(set.get('android_read_screen')!.input.name).toBe('ScreenQuery');
    expect(set.get('android_setup')!.input.name).toBe('SelectorOnlyBody');
    expect(set.get('android_nope')).toBeUndefined();
  });

  it('take a ref or a query where the element tools do (issue 40, item 2): the shapes checked, x/y needed only without them', () => {
    const set = new McpToolSet(clientNames('svc'));
    const [tap, press, type, tree, wait] = ['android_tap', 'android_long_press', 'android_type', 'android_ui_tree', 'android_wait_for'].map((n) =>
      set.get(n)!,
    );
    expect([type.input.name, tree.input.name, wait.input.name]).toEqual(['TypeToolInput', 'UiTreeInput', 'WaitForInput']);
    expect(set.read(tap, { ref: 'e0123456v' })).toMatchObject({ ok: true, value: { ref: 'e0123456v' } });
    expect(set.read(press, { query: { role: 'button' } })).toMatchObject({ ok: true, value: { query: { role: 'button' } } });
    expect(set.read(type, { text: 'hi', query: { text: 'Message', exact: true } })).toMatchObject({ ok: true });
    const refused = (tool: typeof tap, args: unknown) => {
      const r = set.read(tool, args);
      return r.ok ? 'accepted' : r.error.message;
    };
    expect(refused(tap, {})).toMatch(/x must be/);
    expect(refused(tap, { ref: 'w0:3' })).toMatch(/ref must be a ref from android_ui_tree/);
    expect(refused(tap, { ref: `e${'0'.repeat(10_000)}` })).toMatch(/ref must be a ref from android_ui_tree/);
    expect(refused(tap, { query: 'Send' })).toMatch(/query must be an object/);
    expect(refused(tap, { query: {} })).toMatch(/query needs text or role/);
    expect(refused(tap, { query: { text: 'x'.repeat(501) } })).toMatch(/query.text must be 1-500 characters/);
    expect(refused(tap, { query: { role: 'link' } })).toMatch(/query.role must be one of button, input/);
    expect(refused(wait, { text: 'Delivered', timeout_ms: 600_001 })).toMatch(/timeout_ms must not be greater than 600000/);
    expect(refused(wait, { text: 'Delivered', poll_ms: 1 })).toMatch(/poll_ms must not be less than 50/);
    expect(refused(tree, { max_elements: 0 })).toMatch(/max_elements must not be less than 1/);
    const schemas = new Map(set.list().map((t) => [t.name, t]));
    expect(schemas.get('android_tap')!.inputSchema.properties).toMatchObject({
      ref: { type: 'string' },
      query: { $ref: '#/$defs/ElementQueryInput' },
    });
    expect(schemas.get('android_ui_tree')!.outputSchema).toBeDefined();
    expect(schemas.get('android_wait_for')!.outputSchema).toBeDefined();
    expect(schemas.get('android_wait_for')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('read no arguments once per tool (a copy each time), and anything else in full', () => {
    const set = new McpToolSet(clientNames('svc'));
    const screen = set.get('android_read_screen')!;
    const a = set.read(screen, undefined);
    const b = set.read(screen, {});
    expect(a.ok && b.ok && a.value !== b.value && Object.getPrototypeOf(a.value) === Object.getPrototypeOf(b.value)).toBe(true);
    const tapText = set.get('android_tap_text')!;
    for (const args of [{}, undefined]) expect(set.read(tapText, args)).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect(set.read(screen, { include_bounds: 'true' })).toMatchObject({ ok: true, value: { include_bounds: true } });
    expect(set.read(screen, [])).toMatchObject({ ok: false });
  });
});

describe('MCP results', () => {
  const node = (over: Record<string, unknown>) => ({
    nodeId: 'w0:1',
    text: null,
    contentDescription: null,
    className: 'android.widget.TextView',
    viewId: null,
    bounds: { left: 0, top: 0, right: 0, bottom: 0 },
    clickable: false,
    enabled: true,
    ...over,
  });

  it('a screen: header, one line per useful node, zeroed bounds left out, long text cut, containers counted', () => {
    const text = screenText({
      packageName: 'com.example',
      truncated: true,
      nodes: [
        node({ className: 'android.widget.FrameLayout' }),
        node({ nodeId: 'w0:2', text: 'x'.repeat(400), viewId: 'com.example:id/body' }),
        node({ nodeId: 'w0:3', contentDescription: 'Back', clickable: true, enabled: false, bounds: { left: 1, top: 2, right: 3, bottom: 4 } }),
      ],
    });
    expect(text.split('\n')).toEqual([
      'com.example: 3 nodes (truncated by the phone)',
      `[w0:2] TextView "${'x'.repeat(300)}…" #body`,
      '[w0:3] TextView (Back) clickable disabled @1,2-3,4',
      '(1 layout nodes with no text or action left out)',
    ]);
    expect(nodesText({ matches: [] })).toBe('0 matching nodes');
    expect(screenText({})).toBe('an unknown app: 0 nodes');
  });

  it('a phone’s refusal and the relay’s are tool errors in their own words', () => {
    expect(toolResult('json', { status: 403, body: { error: 'nope', error_code: 'x' } })).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'nope' }],
      structuredContent: { error: 'nope', error_code: 'x', ok: false, status: 403 },
    });
    expect(toolResult('json', { status: 404, body: {} }).content).toEqual([{ type: 'text', text: 'the phone refused: {}' }]);
    expect(errorResult(new DomainError('bridge.blocked_package', 'forbidden', 'blocked package a.b', { package: 'a.b' }))).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'blocked package a.b' }],
      structuredContent: { ok: false, error: 'blocked package a.b', code: 'bridge.blocked_package', package: 'a.b' },
    });
    expect(errorResult(new Error('internal detail'))).toBeNull();
  });

  it('the client’s name is kept printable and bounded', () => {
    expect(clientName('Claude Desktop')).toBe('Claude Desktop');
    expect(clientName('a\u0000b\nc<script>')).toBe('a_b_c_script_');
    expect(clientName('x'.repeat(100))).toHaveLength(64);
    expect(clientName(undefined)).toBe('unnamed');
    expect(clientName('\u202e')).toBe('_');
  });
});
