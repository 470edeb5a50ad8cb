import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpSessions } from '../../apps/relay/src/mcp/mcp-sessions';
import { MCP_BODY_LIMIT } from '../../apps/relay/src/mcp/mcp.controller';
import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim, until } from '../support/bridge';
import { initializeBody, mcpConnect, mcpPost, textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/** `/mcp` under attack: what a hostile or broken client sends, answered in the relay's error shape, and nothing recorded. */
describe('MCP endpoint attacks', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  let sessions: McpSessions;
  const API_KEY = 'api-key-of-the-agent-host-0123456789';
  beforeAll(async () => {
    relay = await startRelay({ env: { API_SERVER_KEY: API_KEY } });
    phone = await startSim(relay, { mode: 'app' });
    sessions = relay.app.get(McpSessions);
  });
  afterAll(async () => {
    phone.stop();
    await relay.close();
  });
  const auth = () => bearer(phone.token!);
  /** Opens a session by hand; its id. */
  const open = async (token = phone.token!) => {
    const r = await mcpPost(relay, initializeBody(), bearer(token));
    expect(r.status).toBe(200);
    return r.headers.get('mcp-session-id')!;
  };
  const ping = (id: string, token = phone.token!) =>
    mcpPost(relay, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }), {
      ...bearer(token),
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-11-25',
    });

  it('a body past the limit is 413 before anything reads it; bad JSON, deep JSON and other types are 400/415', async () => {
    const bridgeEvents = () => readEvents(relay.home).filter((e) => e.type.startsWith('bridge.')).length;
    const n = bridgeEvents();
    const huge = await mcpPost(
      relay,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(MCP_BODY_LIMIT) } }),
      auth(),
    );
    expect(huge).toMatchObject({ status: 413, body: { ok: false, code: expect.any(String) } });
    const bad = await mcpPost(relay, '{"jsonrpc": "2.0", "id": 1, "method": ', auth());
    expect(bad).toMatchObject({ status: 400, body: { ok: false, error: expect.any(String) } });
    const deep = await mcpPost(relay, '['.repeat(5000) + ']'.repeat(5000), auth());
    expect(deep).toMatchObject({ status: 400, body: { ok: false } });
    const text = await fetch(`${relay.url}/mcp`, { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: initializeBody() });
    expect(text.status).toBe(415);
    // Without a session: only an initialize may come; a batch, a notification or a call is refused.
    for (const body of [
      '[]',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
      '"initialize"',
    ]) {
      expect(await mcpPost(relay, body, auth())).toMatchObject({ status: 400, body: { ok: false, code: 'mcp.session_required' } });
    }
    expect(bridgeEvents()).toBe(n);
    expect(sessions.size).toBe(0);
  });

  it('an unknown, made-up or foreign session id is 404; a malformed one 400', async () => {
    expect(await ping('00000000-0000-0000-0000-000000000000')).toMatchObject({ status: 404, body: { ok: false, code: 'mcp.unknown_session' } });
    const mine = await open();
    expect((await ping(mine)).status).toBe(200);
    // Another token holding a bridge grant cannot use it, nor learn that it exists.
    const other = await startSim(relay, { mode: 'app' });
    expect(await ping(mine, other.token!)).toMatchObject({ status: 404, body: { code: 'mcp.unknown_session' } });
    other.stop();
    for (const id of ['x'.repeat(129), 'a b', 'é']) {
      const r = await fetch(`${relay.url}/mcp`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json', 'mcp-session-id': id },
        body: '{}',
      }).catch((e: Error) => e);
      if (r instanceof Error) continue; // fetch itself refuses a non-ASCII header value
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ ok: false, code: 'mcp.bad_session_id' });
    }
    // DELETE ends it; it is then unknown.
    const del = await fetch(`${relay.url}/mcp`, {
      method: 'DELETE',
      headers: { ...auth(), 'mcp-session-id': mine, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(del.status).toBe(200);
    expect((await ping(mine)).status).toBe(404);
  });

  it('never takes the API key: only a session bearer with the bridge grant', async () => {
    expect(await mcpPost(relay, initializeBody(), bearer(API_KEY))).toMatchObject({ status: 401, body: { ok: false, code: 'auth.invalid_token' } });
    expect(sessions.size).toBe(0);
  });

  it('a foreign Origin is refused (a web page cannot drive the phone through a browser holding nothing)', async () => {
    const r = await mcpPost(relay, initializeBody(), { ...auth(), origin: 'http://evil.example' });
    expect(r).toMatchObject({ status: 403, body: { ok: false, code: 'mcp.foreign_origin' } });
    const own = await mcpPost(relay, initializeBody(), { ...auth(), origin: relay.url });
    expect(own.status).toBe(200);
    sessions.closeFor(phone.tokenPrefix!, 'test');
  });

  it('HEAD and a GET without a session are refused; GET with one is the session’s event stream', async () => {
    expect((await fetch(`${relay.url}/mcp`, { method: 'HEAD', headers: auth() })).status).toBe(405);
    const get = await fetch(`${relay.url}/mcp`, { headers: { ...auth(), accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    expect(await get.json()).toMatchObject({ code: 'mcp.session_required' });
  });

  it('too many sessions: a device’s oldest gives way to its newest; past the relay’s total, new ones are refused (429)', async () => {
    const limits = sessions.limits;
    sessions.limits = { ...limits, perDevice: 2, total: 3 };
    try {
      const first = await open();
      relay.clock.advanceSeconds(1);
      const second = await open();
      relay.clock.advanceSeconds(1);
      await ping(first); // the first is now the more recently used
      relay.clock.advanceSeconds(1);
      const third = await open();
      expect((await ping(second)).status).toBe(404);
      expect((await ping(first)).status).toBe(200);
      expect((await ping(third)).status).toBe(200);
      const other = await startSim(relay, { mode: 'app' });
      await open(other.token!);
      const refused = await mcpPost(relay, initializeBody(), bearer(other.token!));
      expect(refused).toMatchObject({ status: 429, body: { ok: false, code: 'mcp.too_many_sessions' } });
      expect(sessions.size).toBe(3);
      other.stop();
    } finally {
      sessions.limits = limits;
      sessions.closeFor(phone.tokenPrefix!, 'test');
    }
  });

  it('eight paired devices cannot hold every session: each keeps at most RELAY_MCP_SESSIONS_PER_DEVICE (4), so a ninth still opens', async () => {
    // Issue 34: at 8 per token, 8 devices opening 8 sessions each held all 64 for the idle hour, and everyone else got 429.
    const devices = await Promise.all(Array.from({ length: 8 }, () => pairPhone(relay)));
    const before = sessions.size;
    try {
      for (const d of devices) for (let i = 0; i < 8; i++) expect((await mcpPost(relay, initializeBody(), bearer(d.token))).status).toBe(200);
      expect(sessions.size - before).toBe(8 * 4);
      const ninth = await pairPhone(relay);
      expect((await mcpPost(relay, initializeBody(), bearer(ninth.token))).status).toBe(200);
      sessions.closeFor(ninth.prefix, 'test');
      ninth.phone.close();
    } finally {
      for (const d of devices) {
        sessions.closeFor(d.prefix, 'test');
        d.phone.close();
      }
    }
  });

  it('a device whose sessions are all busy gets 429 mcp.too_many_sessions for another (nothing of another device is closed)', async () => {
    const limits = sessions.limits;
    sessions.limits = { ...limits, perDevice: 1 };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    phone.handlers['/screen_hash'] = async () => (await gate, { status: 200, result: { hash: 'ab12cd34' } });
    try {
      const { client } = await mcpConnect(relay, phone.token!);
      const held = client.callTool({ name: 'android_screen_hash', arguments: {} });
      await until(() => phone.received.some((f) => f.type === 'bridge.command' && f.payload.path === '/screen_hash'));
      const refused = await mcpPost(relay, initializeBody(), bearer(phone.token!));
      expect(refused).toMatchObject({ status: 429, body: { ok: false, code: 'mcp.too_many_sessions', error: expect.stringContaining('all busy') } });
      release();
      expect(((await held) as CallToolResult).isError).toBeFalsy();
      await client.close();
    } finally {
      release();
      delete phone.handlers['/screen_hash'];
      sessions.limits = limits;
      sessions.closeFor(phone.tokenPrefix!, 'test');
    }
  });

  it('an implicit intent over MCP is a tool error naming the rule; the tools say an intent must name its app', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const { tools } = await client.listTools();
    for (const name of ['android_send_intent', 'android_broadcast'])
      expect(tools.find((t) => t.name === name)!.description).toMatch(/must name its app.*package/);
    const before = phone.received.length;
    const r = (await client.callTool({
      name: 'android_send_intent',
      arguments: { action: 'android.intent.action.VIEW', data: 'venmo://paycharge?txn=pay&amount=100' },
    })) as CallToolResult;
    expect(r).toMatchObject({ isError: true, structuredContent: { ok: false, code: 'bridge.implicit_intent' } });
    expect(textOf(r)).toMatch(/package or component/);
    const b = (await client.callTool({ name: 'android_broadcast', arguments: { action: 'com.venmo.ACTION' } })) as CallToolResult;
    expect(b).toMatchObject({ isError: true, structuredContent: { code: 'bridge.implicit_intent' } });
    expect(phone.received.length).toBe(before);
    await client.close();
  });

  it('a session idle past its bound (the relay’s clock) ends', async () => {
    const id = await open();
    relay.clock.advance(sessions.limits.idleMs - 1000);
    await relay.sweep();
    expect((await ping(id)).status).toBe(200);
    relay.clock.advance(sessions.limits.idleMs);
    await relay.sweep();
    expect((await ping(id)).status).toBe(404);
  });

  it('a token revoked mid-session stops at once: its open stream closes, its next call is 401, its sessions are gone', async () => {
    const victim = await startSim(relay, { mode: 'app', deviceName: 'Victim' });
    const { client } = await mcpConnect(relay, victim.token!);
    expect(((await client.callTool({ name: 'android_ping', arguments: {} })) as CallToolResult).isError).toBeFalsy();
    // A second session, by hand, holding its GET event stream open (the SDK client holds its own).
    const id = await open(victim.token!);
    const stream = await fetch(`${relay.url}/mcp`, {
      headers: { ...bearer(victim.token!), accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const reader = stream.body!.getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return 'closed';
    })().catch(() => 'closed');
    const revoke = await fetch(`${relay.url}/sessions/${victim.tokenPrefix}`, { method: 'DELETE', headers: bearer(phone.token!) });
    expect(revoke.status).toBe(200);
    await until(
      () =>
        sessions.get(id, { caller: { kind: 'device', tokenPrefix: victim.tokenPrefix!, deviceId: '', deviceName: '' }, onHost: true }) === undefined,
    );
    expect(await Promise.race([ended, new Promise((r) => setTimeout(() => r('still open'), 3000))])).toBe('closed');
    const after = await client.callTool({ name: 'android_ping', arguments: {} }).catch((e: Error) => e);
    expect(after).toBeInstanceOf(Error);
    expect((after as Error).message).toMatch(/401|unknown, revoked or expired session token/);
    const raw = await ping(id, victim.token!);
    expect(raw).toMatchObject({ status: 401, body: { code: 'auth.invalid_token' } });
    victim.stop();
    await client.close().catch(() => undefined);
  });

  it('a tool call’s arguments are the DTO’s or refused by it; nothing unknown reaches the phone', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const before = phone.received.length;
    for (const args of [{ x: 'NaN', y: 1 }, { x: 1e12, y: 1 }, { nodeId: { $gt: '' } }, { x: 1, y: 1, duration_ms: -5 }]) {
      const r = (await client.callTool({ name: 'android_tap', arguments: args })) as CallToolResult;
      expect(r).toMatchObject({ isError: true, structuredContent: { ok: false } });
    }
    const r = (await client.callTool({ name: 'android_press_key', arguments: { key: 'KEYCODE_POWER' } })) as CallToolResult;
    expect(textOf(r)).toContain('key must be a global action');
    expect(phone.received.length).toBe(before);
    // Undeclared keys are dropped, as over HTTP.
    await client.callTool({ name: 'android_tap', arguments: { x: 3, y: 4, evil: 'rm -rf' } });
    const sent = phone.received.at(-1)!;
    expect(JSON.stringify(sent.payload)).not.toContain('evil');
    await client.close();
  });
});
