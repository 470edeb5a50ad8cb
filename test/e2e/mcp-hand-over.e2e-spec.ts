import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim, until } from '../support/bridge';
import { call } from '../support/http';
import { BIN, ensureBuilt } from '../support/dist';
import { mcpConnect, textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

beforeAll(() => ensureBuilt(), 120_000);

/*
 * android_hand_over (issue 40, item 5): the agent asks the phone's user to take over, as a confirmation the
 * phone shows (`bridge.confirm`), and gets back done, declined or timed_out (the deadline on the relay's
 * clock). Over Streamable HTTP and over stdio (`svc relay mcp`), with android_type_secret on stdio as well.
 * The unmodified app, which drops `bridge.confirm`, is asked in a Threads message: mcp-hand-over-thread.e2e-spec.ts.
 */
describe('android_hand_over, and both human tools over stdio', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  const sims: PhoneSim[] = [];
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { deviceName: 'Pixel Hand' });
    sims.push(phone);
  });
  afterAll(async () => {
    for (const s of sims) s.stop();
    await relay.close();
  });
  const decisions = (requestId: unknown) =>
    readEvents(relay.home)
      .filter((e) => e.type === 'bridge.safety_decided' && e.data.requestId === requestId)
      .map((e) => e.data);
  const handOver = async (token: string, args: Record<string, unknown>) => {
    const { client } = await mcpConnect(relay, token);
    try {
      return (await client.callTool({ name: 'android_hand_over', arguments: args })) as CallToolResult;
    } finally {
      await client.close();
    }
  };
  const lastConfirm = (s: PhoneSim) => s.received.filter((f) => f.type === 'bridge.confirm').at(-1)?.payload;

  it('the user takes over and taps Allow: "done", with the question and the answer in the log', async () => {
    phone.confirm = 'allow';
    const r = await handOver(phone.token!, { message: 'log in to the bank app', timeout_s: 60 });
    expect(r.isError).toBeFalsy();
    expect(JSON.parse(textOf(r))).toEqual({ answer: 'done', device: 'Pixel Hand', via: 'confirm' });
    expect(r.structuredContent).toEqual({ answer: 'done', device: 'Pixel Hand', via: 'confirm' });
    const asked = lastConfirm(phone)!;
    expect(asked).toMatchObject({
      verb: 'hand_over',
      path: '/hand_over',
      text: 'Take over: log in to the bank app. Tap Allow when you are done, Deny to refuse.',
    });
    expect(decisions(asked.request_id).map((d) => [d.decision, d.path, d.verb, d.via])).toEqual([
      ['confirmation_requested', '/hand_over', 'hand_over', 'mcp'],
      ['confirmation_allowed', '/hand_over', 'hand_over', undefined],
    ]);
  });

  it('the user taps Deny: "declined"', async () => {
    phone.confirm = 'deny';
    const r = await handOver(phone.token!, { message: 'approve the login' });
    expect(JSON.parse(textOf(r))).toMatchObject({ answer: 'declined' });
    expect(decisions(lastConfirm(phone)!.request_id).map((d) => d.decision)).toEqual(['confirmation_requested', 'confirmation_denied']);
  });

  it('no answer: "timed_out" when timeout_s passes on the relay’s clock, not before', async () => {
    phone.confirm = 'ignore';
    const seen = phone.received.filter((f) => f.type === 'bridge.confirm').length;
    const pending = handOver(phone.token!, { message: 'solve the captcha', timeout_s: 90 });
    await until(() => phone.received.filter((f) => f.type === 'bridge.confirm').length > seen);
    const id = lastConfirm(phone)!.request_id as string;
    await until(() => relay.loop.models.bridge.pendingConfirmation(id) !== undefined);
    relay.clock.advance(89_000);
    await relay.sweep();
    expect(relay.loop.models.bridge.pendingConfirmation(id)).toBeDefined();
    relay.clock.advance(1_000);
    await relay.sweep();
    const r = await pending;
    expect(JSON.parse(textOf(r))).toMatchObject({ answer: 'timed_out' });
    expect(decisions(id).map((d) => d.decision)).toEqual(['confirmation_requested', 'confirmation_timed_out']);
    phone.confirm = 'allow';
  });

  it('hostile input: an empty, long or multi-line message, a timeout out of range', async () => {
    const before = phone.received.length;
    for (const args of [
      {},
      { message: '' },
      { message: '   ' },
      { message: 'x'.repeat(501) },
      { message: 'one\ntwo' },
      { message: 'ok', timeout_s: 0 },
      { message: 'ok', timeout_s: 601 },
      { message: 'ok', timeout_s: 1.5 },
      { message: 'ok', timeout_s: '60' },
      { message: { toString: 'x' } },
    ]) {
      const r = await handOver(phone.token!, args);
      expect(r.isError).toBe(true);
    }
    expect(phone.received.slice(before).filter((f) => f.type === 'bridge.confirm')).toEqual([]);
  });

  it('over stdio (`svc relay mcp`): a secret typed by name and a hand-over answered, neither value on stdout', async () => {
    expect((await call(relay, 'POST', '/console/api/secrets', { name: 'pin', value: '90210-Qx7' })).status).toBe(200);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'relay', 'mcp'],
      env: { PATH: process.env.PATH!, RELAY_HOST: '127.0.0.1', RELAY_PORT: String(relay.port), MOBILE_BRIDGE_TOKEN: phone.token! },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: 'stdio-human', version: '1.0.0' });
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    try {
      await client.connect(transport);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['android_type_secret', 'android_hand_over']));
      const typed = (await client.callTool({ name: 'android_type_secret', arguments: { name: 'pin', clearFirst: true } })) as CallToolResult;
      expect(JSON.parse(textOf(typed))).toEqual({ ok: true, typed: 'the secret "pin"' });
      expect(JSON.stringify(typed)).not.toContain('90210-Qx7');
      expect(phone.state.focusedText).toBe('90210-Qx7');
      phone.confirm = 'allow';
      const handed = (await client.callTool({ name: 'android_hand_over', arguments: { message: 'check the code' } })) as CallToolResult;
      expect(JSON.parse(textOf(handed))).toMatchObject({ answer: 'done' });
      const sent = readEvents(relay.home)
        .filter((e) => e.type === 'bridge.command_sent')
        .at(-1)!;
      expect(sent.data).toMatchObject({ path: '/type', secret: 'pin', via: 'mcp', client: 'stdio-human' });
      expect(errors).toEqual([]);
      expect(stderr).not.toContain('90210-Qx7');
    } finally {
      await client.close();
    }
  });
});
