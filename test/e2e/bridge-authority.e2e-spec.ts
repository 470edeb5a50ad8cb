import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { bearer, pairPhone, readEvents, startRelay, type Phone, type TestRelay } from '../support/harness';
import { dc, op, startSim } from '../support/bridge';
import { callFrom, fetchFrom } from '../support/elsewhere';
import { tcpForwarder, type Forwarder } from '../support/forwarders';
import { initializeBody, mcpConnect, mcpPost } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/*
 * Issue 34, finding 5: "one phone drives another". Every pairing holds the `bridge` grant by default, so
 * before this any paired session drove any phone on the bridge. The rule now (libs/domain
 * bridge-authority.ts): from the relay's host (loopback, where the agent's tools run) a bridge session may
 * drive any phone, as the host tools' `device` selector needs (android_tool.py:101-135); from anywhere
 * else a session drives its own phone only. Requests "from elsewhere" come from 127.0.0.2: a real TCP
 * peer that is not loopback (test/support/elsewhere.ts).
 */
describe('Who may drive which phone', () => {
  let relay: TestRelay;
  let alice: PhoneSim;
  let bob: PhoneSim;
  let desk: { phone: Phone; token: string; prefix: string };
  beforeAll(async () => {
    relay = await startRelay();
    alice = await startSim(relay, { mode: 'app', deviceId: 'alice-phone', deviceName: 'Alice' });
    bob = await startSim(relay, { mode: 'app', deviceId: 'bob-phone', deviceName: 'Bob' });
    // A session that says it is a desktop (the reference desktop CLI's client_surface, deviceIdentity.ts:105).
    desk = await pairPhone(relay, { device: { device_id: 'desk-1', device_name: 'Desk', client_surface: 'desktop', device_form_factor: 'desktop' } });
  });
  afterAll(async () => {
    alice.stop();
    bob.stop();
    desk.phone.close();
    await relay.close();
  });
  const commands = (s: PhoneSim) => s.received.filter((f) => f.type === 'bridge.command').length;
  const sentTo = (s: PhoneSim) =>
    readEvents(relay.home).filter((e) => e.type === 'bridge.command_sent' && e.data.tokenPrefix === s.tokenPrefix).length;
  const auth = (token: string) => bearer(token);

  it('from another machine a phone’s session drives its own phone, named or not', async () => {
    const before = commands(alice);
    expect((await callFrom(relay.url, 'GET', '/ping', undefined, auth(alice.token!))).status).toBe(200);
    expect((await callFrom(relay.url, 'POST', '/tap', { x: 5, y: 5, device: 'alice-phone' }, auth(alice.token!))).status).toBe(200);
    expect((await callFrom(relay.url, 'GET', `/ping?device=${alice.tokenPrefix}`, undefined, auth(alice.token!))).status).toBe(200);
    expect(commands(alice)).toBe(before + 3);
  });

  it('from another machine a phone’s session naming another phone is refused: 403 bridge.not_your_phone, nothing sent or recorded', async () => {
    const [b, s] = [commands(bob), sentTo(bob)];
    for (const selector of ['bob-phone', bob.tokenPrefix!, 'Bob']) {
      const r = await callFrom(relay.url, 'POST', '/tap', { x: 10, y: 10, device: selector }, auth(alice.token!));
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ ok: false, code: 'bridge.not_your_phone', error: expect.stringContaining('its own phone') });
      // A client that shows only the status line (python requests' raise_for_status) reads why.
      expect(r.statusText).toMatch(/own phone/i);
    }
    // The query selector too; and a name that matches nothing is the same 403 (another machine learns no phone's name).
    expect((await callFrom(relay.url, 'GET', '/screen?device=bob-phone', undefined, auth(alice.token!))).body.code).toBe('bridge.not_your_phone');
    expect((await callFrom(relay.url, 'GET', '/ping?device=nokia-3310', undefined, auth(alice.token!))).body.code).toBe('bridge.not_your_phone');
    expect([commands(bob), sentTo(bob)]).toEqual([b, s]);
  });

  it('without a selector it never falls to the active phone or the only one: a session with no phone of its own drives none', async () => {
    expect((await op(relay, 'POST', '/bridge/select-active', { device: 'bob-phone' })).status).toBe(200);
    const [a, b] = [commands(alice), commands(bob)];
    // Alice's own phone, not the active one.
    expect((await callFrom(relay.url, 'GET', '/ping', undefined, auth(alice.token!))).status).toBe(200);
    expect([commands(alice), commands(bob)]).toEqual([a + 1, b]);
    // A session that says it is a desktop has no phone: its word (client_surface) is not an authority.
    for (const path of ['/ping', '/ping?device=bob-phone']) {
      const r = await callFrom(relay.url, 'GET', path, undefined, auth(desk.token));
      expect(r).toMatchObject({ status: 403, body: { code: 'bridge.not_your_phone' } });
    }
    expect(commands(bob)).toBe(b);
  });

  it('from the relay’s host a bridge session drives any phone: the host tools’ multi-device selector keeps working', async () => {
    const b = commands(bob);
    // android_tool.py:183-198 sends `device` in the body (POST) or the query (GET) to http://localhost:8767.
    expect((await dc(relay, alice.token!, 'POST', '/tap', { x: 1, y: 1, device: 'bob-phone' })).status).toBe(200);
    expect((await dc(relay, desk.token, 'GET', '/ping')).status).toBe(200); // the active phone
    expect(commands(bob)).toBe(b + 2);
  });

  it('a request a local proxy forwards is not the host’s', async () => {
    const r = await fetch(`${relay.url}/ping?device=bob-phone`, { headers: { ...auth(alice.token!), 'x-forwarded-for': '203.0.113.7' } });
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ code: 'bridge.not_your_phone' });
  });

  it('/mcp from another machine: the same rule for tool calls, and the phones resource lists only its own phone', async () => {
    const { client } = await mcpConnect(relay, alice.token!, { fetch: fetchFrom() });
    const b = commands(bob);
    const refused = (await client.callTool({ name: 'android_tap', arguments: { x: 3, y: 3, device: 'bob-phone' } })) as CallToolResult;
    expect(refused).toMatchObject({ isError: true, structuredContent: { ok: false, code: 'bridge.not_your_phone' } });
    expect(refused.structuredContent).not.toHaveProperty('reasonPhrase'); // the status line's, not the body's
    const own = (await client.callTool({ name: 'android_ping', arguments: {} })) as CallToolResult;
    expect(own.isError).toBeFalsy();
    expect(commands(bob)).toBe(b);
    const res = (await client.readResource({ uri: 'device-control://phones' })) as ReadResourceResult;
    const phones = JSON.parse((res.contents[0] as { text: string }).text).phones as Array<{ device_id: string }>;
    expect(phones.map((p) => p.device_id)).toEqual(['alice-phone']);
    await client.close();
    // From the host the same token's session drives Bob and lists every phone.
    const host = await mcpConnect(relay, alice.token!);
    const ok = (await host.client.callTool({ name: 'android_tap', arguments: { x: 3, y: 3, device: 'bob-phone' } })) as CallToolResult;
    expect(ok.isError).toBeFalsy();
    const all = (await host.client.readResource({ uri: 'device-control://phones' })) as ReadResourceResult;
    expect(JSON.parse((all.contents[0] as { text: string }).text).phones).toHaveLength(3);
    await host.client.close();
  });

  it('an MCP session opened on the host is unknown to the same token from elsewhere (404), so it lends no host authority', async () => {
    const opened = await mcpPost(relay, initializeBody(), auth(alice.token!));
    expect(opened.status).toBe(200);
    const id = opened.headers.get('mcp-session-id')!;
    const ping = (f: typeof fetch) =>
      f(`${relay.url}/mcp`, {
        method: 'POST',
        headers: {
          ...auth(alice.token!),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': id,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
    const away = await ping(fetchFrom());
    expect(away.status).toBe(404);
    expect(await away.json()).toMatchObject({ code: 'mcp.unknown_session' });
    expect((await ping(fetch)).status).toBe(200);
  });
});

/*
 * Under RELAY_LOOPBACK_TRUST=key "the relay's host" is a credential too: a same-host proxy or tunnel makes any
 * caller loopback, so a bearer from loopback drives only its own phone unless the request also carries the
 * operator key (PROTOCOL.md, Security, "Who is the operator").
 */
describe('Who may drive which phone, with RELAY_LOOPBACK_TRUST=key', () => {
  let relay: TestRelay;
  let alice: PhoneSim;
  let bob: PhoneSim;
  let fwd: Forwarder;
  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_LOOPBACK_TRUST: 'key' } });
    alice = await startSim(relay, { mode: 'app', deviceId: 'alice-phone', deviceName: 'Alice' });
    bob = await startSim(relay, { mode: 'app', deviceId: 'bob-phone', deviceName: 'Bob' });
    fwd = await tcpForwarder(relay.port);
  });
  afterAll(async () => {
    alice.stop();
    bob.stop();
    await fwd.close();
    await relay.close();
  });
  const bobs = () => bob.received.filter((f) => f.type === 'bridge.command').length;

  it('a bearer from loopback drives its own phone only; with the operator key any; through a forwarder never another', async () => {
    const b = bobs();
    const own = await fetch(`${relay.url}/ping`, { headers: bearer(alice.token!) });
    expect(own.status).toBe(200);
    const other = await fetch(`${relay.url}/ping?device=bob-phone`, { headers: bearer(alice.token!) });
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ code: 'bridge.not_your_phone' });
    const through = await fetch(`${fwd.url}/ping?device=bob-phone`, { headers: bearer(alice.token!) });
    expect(through.status).toBe(403);
    expect(bobs()).toBe(b);
    const keyed = await fetch(`${relay.url}/ping?device=bob-phone`, { headers: { ...bearer(alice.token!), ...relay.op } });
    expect(keyed.status).toBe(200);
    expect(bobs()).toBe(b + 1);
  });
});
