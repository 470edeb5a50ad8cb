import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim, until } from '../support/bridge';
import { call, REMOTE } from '../support/http';
import { mcpConnect, textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/*
 * Named secrets (issue 40, item 3): the operator registers them (operator key only), an agent types one by
 * name with android_type_secret over the official MCP SDK client, and the value lands on the phone's screen
 * and nowhere else: not in the tool result, the log's bytes, the relay's own log, /metrics or any console route.
 */

const PLAIN = 'Zq81-hunter2-vault';
/** Holds "send", a destructive word: the confirmation rules apply, and the question must not show it. */
const RISKY = 'please send 4471-Kx';

/** Every file under the home, as bytes in one string (log segments, keys, snapshots, everything); `names` collects their names. */
function homeBytes(dir: string, names: string[] = []): string {
  let out = '';
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out += homeBytes(p, names);
    else if (e.isFile()) {
      names.push(e.name);
      out += fs.readFileSync(p).toString('latin1');
    }
  }
  return out;
}

describe('android_type_secret: a secret the model never sees', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  const sims: PhoneSim[] = [];
  /** Everything an agent and the operator were answered: searched for the values at the end. */
  const seen: string[] = [];
  const tool = async (token: string, name: string, args: Record<string, unknown>, opts: Parameters<typeof mcpConnect>[2] = {}) => {
    const { client } = await mcpConnect(relay, token, opts);
    try {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      seen.push(JSON.stringify(r));
      return r;
    } finally {
      await client.close();
    }
  };
  const op = async (method: string, route: string, body?: unknown) => {
    const r = await call(relay, method, route, body);
    seen.push(JSON.stringify(r.body));
    return r;
  };
  const events = (type: string) => readEvents(relay.home).filter((e) => e.type === type);
  beforeAll(async () => {
    relay = await startRelay({ env: { RELAY_MCP_SECRETS_MAX: '4' }, config: { snapshotEvery: 5 } });
    phone = await startSim(relay, { deviceName: 'Pixel Secrets' });
    sims.push(phone);
  });
  afterAll(async () => {
    for (const s of sims) s.stop();
    await relay.close();
  });

  it('the operator registers a secret; the agent types it by name; the phone gets the value, the agent and the record only the name', async () => {
    const set = await op('POST', '/console/api/secrets', { name: 'wifi', value: PLAIN });
    expect(set).toMatchObject({ status: 200, body: { ok: true, name: 'wifi', replaced: false } });
    const r = await tool(phone.token!, 'android_type_secret', { name: 'wifi', clearFirst: true });
    expect(r.isError).toBeFalsy();
    expect(JSON.parse(textOf(r))).toEqual({ ok: true, typed: 'the secret "wifi"' });
    expect(phone.state.focusedText).toBe(PLAIN);
    const sent = events('bridge.command_sent').at(-1)!;
    expect(sent.data).toMatchObject({ path: '/type', secret: 'wifi', via: 'mcp', shape: { text: 'string', clearFirst: true } });
    const setEvent = events('secret.set').at(-1)!;
    expect(setEvent.data).toMatchObject({ name: 'wifi', replaced: false, sealed: { key: expect.stringMatching(/^secret-wifi:/) } });
    expect(setEvent.data).not.toHaveProperty('value');
    const listed = await op('GET', '/console/api/secrets');
    expect(listed.body).toMatchObject({ ok: true, max: 4, secrets: [{ name: 'wifi', created: expect.any(Number), last_used: expect.any(Number) }] });
    expect(Object.keys(listed.body.secrets[0]).sort()).toEqual(['created', 'last_used', 'name', 'updated']);
  });

  it('a value with a destructive word is confirmed under the secret’s name: the MCP client’s user, then the phone’s, never see the value', async () => {
    await op('POST', '/console/api/secrets', { name: 'risky', value: RISKY });
    const asked: string[] = [];
    phone.confirm = 'allow';
    const r = await tool(
      phone.token!,
      'android_type_secret',
      { name: 'risky', clearFirst: true },
      {
        elicit: (message) => (asked.push(message), { action: 'accept', content: { allow: true } }),
      },
    );
    expect(r.isError).toBeFalsy();
    expect(phone.state.focusedText).toBe(RISKY);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('the secret "risky"');
    const confirm = phone.received.filter((f) => f.type === 'bridge.confirm').at(-1)!.payload;
    expect(confirm).toMatchObject({ verb: 'type_secret', path: '/type', text: 'the secret "risky"' });
    const decided = events('bridge.safety_decided').filter((e) => e.data.path === '/type');
    expect(decided.map((e) => e.data.decision)).toEqual(expect.arrayContaining(['confirmation_requested', 'confirmation_allowed']));
    for (const e of decided) expect(JSON.stringify(e.data)).not.toMatch(/"send"/);
    expect(decided.filter((e) => e.data.verb !== undefined).every((e) => e.data.verb === 'type_secret')).toBe(true);

    phone.confirm = 'deny';
    const denied = await tool(phone.token!, 'android_type_secret', { name: 'risky' });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toBe('user denied destructive action');
    phone.confirm = 'allow';
  });

  it('the app’s own modal: its refusal quotes the text it inspected, and the relay scrubs the value out of it', async () => {
    const app = await startSim(relay, { mode: 'app', deviceName: 'App Phone', confirm: 'deny' });
    sims.push(app);
    const r = await tool(app.token!, 'android_type_secret', { name: 'risky' });
    expect(r.isError).toBe(true);
    // app-mode.ts answers as BridgeCommandHandler.kt:654-658 does: "(Text inspected: "<the text>")".
    expect(textOf(r)).toContain('(Text inspected: "[the secret "risky"]")');
    expect(JSON.stringify(r)).not.toContain(RISKY);
  });

  it('a blocklisted app in the foreground refuses the secret as it refuses typing', async () => {
    const bank = await startSim(relay, { deviceName: 'Bank Phone' });
    sims.push(bank);
    bank.phone.setForeground('com.squareup.cash');
    await until(() => relay.loop.models.bridge.device(bank.tokenPrefix!)?.currentApp === 'com.squareup.cash');
    const r = await tool(bank.token!, 'android_type_secret', { name: 'wifi' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('blocked package com.squareup.cash');
    expect(bank.received.filter((f) => f.type === 'bridge.command' && f.payload.path === '/type')).toEqual([]);
  });

  it('hostile names, values and sizes: refused with a code that names the field, never the value; the count is bounded', async () => {
    for (const name of ['', 'a'.repeat(41), '../etc', 'näme', 'a b', 7, ['x'], null]) {
      const r = await op('POST', '/console/api/secrets', { name, value: PLAIN });
      expect(r).toMatchObject({ status: 400, body: { ok: false, code: 'secrets.bad_name' } });
    }
    const long = 'L'.repeat(1025);
    for (const value of [long, 'two\nlines', 'tab\there', '', 42, { v: 1 }]) {
      const r = await op('POST', '/console/api/secrets', { name: 'bad', value });
      expect(r).toMatchObject({ status: 400, body: { ok: false, code: 'secrets.bad_value' } });
      expect(JSON.stringify(r.body)).not.toContain(typeof value === 'string' && value ? value : '\u0000');
    }
    expect((await op('POST', '/console/api/secrets', { name: 'max', value: 'M'.repeat(1024) })).status).toBe(200);
    expect((await op('POST', '/console/api/secrets', { name: 'four', value: 'x' })).status).toBe(200);
    const fifth = await op('POST', '/console/api/secrets', { name: 'five', value: 'x' });
    expect(fifth).toMatchObject({ status: 409, body: { ok: false, code: 'secrets.too_many' } });
    // Replacing one is no new secret.
    expect((await op('POST', '/console/api/secrets', { name: 'four', value: 'y' })).body).toMatchObject({ ok: true, replaced: true });
    for (const name of ['../x', 'a'.repeat(41), '']) {
      const r = await tool(phone.token!, 'android_type_secret', { name });
      expect(r.isError).toBe(true);
    }
    const unknown = await tool(phone.token!, 'android_type_secret', { name: 'nope' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^no secret is named "nope"/);
  });

  it('operator authority only: no key, a phone’s bearer, or a proxied request is refused', async () => {
    for (const [method, route, body] of [
      ['GET', '/console/api/secrets', undefined],
      ['POST', '/console/api/secrets', { name: 'evil', value: 'x' }],
      ['POST', '/console/api/secrets/forget', { name: 'wifi' }],
    ] as const) {
      expect((await call(relay, method, route, body, {}, { key: false })).status).toBe(401);
      expect((await call(relay, method, route, body, bearer(phone.token!), { key: false })).status).toBe(401);
      expect((await call(relay, method, route, body, REMOTE)).status).toBe(403);
    }
    expect(relay.loop.models.secrets.get('evil')).toBeUndefined();
  });

  it('replacing destroys the old value’s key; forgetting destroys the secret’s key: the record stays in the chain, typing is refused clearly', async () => {
    const keyFile = path.join(relay.home, 'relay', 'personal-keys.json');
    const keysOf = (name: string) =>
      Object.keys((JSON.parse(fs.readFileSync(keyFile, 'utf8')) as { keys: object }).keys).filter((k) => k.startsWith(`secret-${name}:`));
    const before = keysOf('wifi');
    expect(before).toHaveLength(1);
    expect((await op('POST', '/console/api/secrets', { name: 'wifi', value: PLAIN })).body).toMatchObject({ replaced: true });
    const after = keysOf('wifi');
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before[0]);

    const forgot = await op('POST', '/console/api/secrets/forget', { name: 'wifi' });
    expect(forgot).toMatchObject({ status: 200, body: { ok: true, name: 'wifi', keys: 1 } });
    expect(keysOf('wifi')).toEqual([]);
    expect(events('secret.set').filter((e) => e.data.name === 'wifi')).toHaveLength(2);
    const r = await tool(phone.token!, 'android_type_secret', { name: 'wifi' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^no secret is named "wifi" \(never registered, or forgotten\)/);
    expect((await op('POST', '/console/api/secrets/forget', { name: 'wifi' })).status).toBe(404);
    // A replay (a restart) opens what it can: the forgotten one is gone, the others are as they were.
    seen.push(...relay.logs);
    relay = await relay.restart();
    expect(relay.loop.models.secrets.get('wifi')).toBeUndefined();
    expect(relay.loop.models.secrets.get('risky')?.value).toBe(RISKY);
  });

  it('the values appear nowhere but on the phones: not in the home’s files, the relay’s log, /metrics, any console route, or an answer', async () => {
    const metrics = await (await fetch(`${relay.url}/metrics`, { headers: relay.op })).text();
    const consoleRoutes = relay.routes.filter((r) => r.method === 'GET' && r.url.startsWith('/console/api/') && !r.url.includes(':'));
    expect(consoleRoutes.length).toBeGreaterThan(10);
    const answers: string[] = [];
    for (const r of consoleRoutes) {
      const stop = new AbortController();
      const res = await fetch(`${relay.url}${r.url}`, { headers: relay.op, signal: stop.signal });
      if (!res.headers.get('content-type')?.startsWith('text/event-stream')) answers.push(await res.text());
      else {
        // The live stream never ends: its first message (the state it starts from) is what it tells.
        const first = await res.body!.getReader().read();
        answers.push(Buffer.from(first.value ?? []).toString());
        stop.abort();
      }
    }
    const files: string[] = [];
    const everywhere = [homeBytes(relay.home, files), relay.logs.join('\n'), metrics, ...answers, ...seen].join('\n');
    // The search reads what it should: the records, the keys and the snapshots (which hold the read models) are in it.
    expect(everywhere).toContain('wifi');
    expect(files).toEqual(expect.arrayContaining(['personal-keys.json', expect.stringMatching(/^snapshot-\d{12}\.json$/)]));
    for (const value of [PLAIN, RISKY, 'M'.repeat(1024)]) expect(everywhere).not.toContain(value);
  });
});
