import type { CallToolResult, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim, until } from '../support/bridge';
import { mcpConnect, textOf } from '../support/mcp';
import type { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

/**
 * Confirmation through the agent's user (issue 25): an MCP client that declares elicitation is asked
 * about a destructive command before the phone is, as well as the phone and never instead of it; its
 * user's answer is a safety decision recorded with who answered.
 */
describe('MCP elicitation before a destructive command', () => {
  let relay: TestRelay;
  let phone: PhoneSim;
  beforeAll(async () => {
    relay = await startRelay();
    phone = await startSim(relay, { mode: 'app', deviceName: 'Pixel' });
  });
  afterAll(async () => {
    phone.stop();
    await relay.close();
  });
  const decisionsOf = (requestId: unknown) =>
    readEvents(relay.home)
      .filter((e) => e.type === 'bridge.safety_decided' && e.data.requestId === requestId)
      .map((e) => [e.data.decision, e.data.by ?? null]);
  const lastRequestId = () =>
    readEvents(relay.home)
      .filter((e) => e.type === 'bridge.safety_decided')
      .at(-1)!.data.requestId;
  const sentFor = (requestId: unknown) => readEvents(relay.home).filter((e) => e.type === 'bridge.command_sent' && e.data.requestId === requestId);

  it('yes from the agent’s user: the phone is asked too, and both answers are recorded', async () => {
    const asked: string[] = [];
    const { client } = await mcpConnect(relay, phone.token!, {
      name: 'desk-agent',
      elicit: (message) => (asked.push(message), { action: 'accept', content: { allow: true } }),
    });
    const modal = phone.modalAsked.length;
    const r = (await client.callTool({ name: 'android_tap_text', arguments: { text: 'Send' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(asked).toEqual([
      'The agent asks to tap text on the phone "Pixel": "Send" holds the destructive action "send". Allow it? The phone will ask its user too.',
    ]);
    expect(phone.modalAsked.slice(modal)).toEqual([{ path: '/tap_text', text: 'Send' }]);
    const id = lastRequestId();
    expect(decisionsOf(id)).toEqual([
      ['confirmation_requested', 'mcp_client'],
      ['confirmation_allowed', 'mcp_client'],
      ['confirmation_requested', 'phone'],
      ['confirmation_allowed', 'phone'],
    ]);
    const answer = readEvents(relay.home).find((e) => e.data.requestId === id && e.data.decision === 'confirmation_allowed')!;
    expect(answer.data).toMatchObject({
      via: 'mcp',
      client: 'desk-agent',
      reason: expect.stringContaining('the user of MCP client "desk-agent" allowed "send"'),
    });
    // Nothing destructive, nothing asked.
    await client.callTool({ name: 'android_tap_text', arguments: { text: 'Settings' } });
    expect(asked).toHaveLength(1);
    await client.close();
  });

  it('no from the agent’s user: refused before the phone is bothered', async () => {
    for (const answer of [{ action: 'decline' }, { action: 'accept', content: { allow: false } }, { action: 'cancel' }] as ElicitResult[]) {
      const { client } = await mcpConnect(relay, phone.token!, { elicit: () => answer });
      const modal = phone.modalAsked.length;
      const r = (await client.callTool({ name: 'android_send_sms', arguments: { to: '+1 202 555 0142', body: 'hello' } })) as CallToolResult;
      expect(r).toMatchObject({ isError: true, structuredContent: { code: 'bridge.confirmation_denied', asked: 'mcp_client' } });
      expect(textOf(r)).toBe('user denied destructive action');
      expect(phone.modalAsked.length).toBe(modal);
      const id = lastRequestId();
      expect(decisionsOf(id)).toEqual([
        ['confirmation_requested', 'mcp_client'],
        ['confirmation_denied', 'mcp_client'],
      ]);
      expect(sentFor(id)).toEqual([]);
      await client.close();
    }
  });

  it('yes from the agent’s user, no from the phone’s: the phone’s word stands', async () => {
    const { client } = await mcpConnect(relay, phone.token!, { elicit: () => ({ action: 'accept', content: { allow: true } }) });
    phone.confirm = 'deny';
    const r = (await client.callTool({ name: 'android_type', arguments: { text: 'delete everything' } })) as CallToolResult;
    phone.confirm = 'allow';
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('The user denied');
    expect(decisionsOf(lastRequestId())).toEqual([
      ['confirmation_requested', 'mcp_client'],
      ['confirmation_allowed', 'mcp_client'],
      ['confirmation_requested', 'phone'],
      ['confirmation_denied', 'phone'],
    ]);
    await client.close();
  });

  it('silence past the deadline (the relay’s clock) is a denial; the late answer changes nothing', async () => {
    let answer!: (r: ElicitResult) => void;
    let asked = false;
    const { client } = await mcpConnect(relay, phone.token!, {
      elicit: () => ((asked = true), new Promise<ElicitResult>((resolve) => (answer = resolve))),
    });
    const call = client.callTool({ name: 'android_call', arguments: { number: '+1 202 555 0142' } }) as Promise<CallToolResult>;
    await until(() => asked);
    relay.clock.advanceSeconds(relay.config.bridge.confirmTimeoutSeconds);
    await relay.sweep();
    const r = await call;
    expect(r).toMatchObject({ isError: true, structuredContent: { code: 'bridge.confirmation_denied' } });
    const id = lastRequestId();
    expect(decisionsOf(id)).toEqual([
      ['confirmation_requested', 'mcp_client'],
      ['confirmation_timed_out', null],
    ]);
    answer({ action: 'accept', content: { allow: true } });
    await new Promise((r) => setTimeout(r, 50));
    expect(decisionsOf(id)).toHaveLength(2);
    expect(sentFor(id)).toEqual([]);
    await client.close();
  });

  it('the phone leaving while the agent’s user is asked cancels the question', async () => {
    const other = await startSim(relay, { mode: 'app', deviceName: 'Leaving' });
    let asked = false;
    const { client } = await mcpConnect(relay, other.token!, { elicit: () => ((asked = true), new Promise<ElicitResult>(() => undefined)) });
    const call = client.callTool({ name: 'android_send_sms', arguments: { to: '123', body: 'x', device: 'Leaving' } }) as Promise<CallToolResult>;
    await until(() => asked);
    other.stop();
    const r = await call;
    expect(r).toMatchObject({ isError: true, structuredContent: { code: 'bridge.phone_gone' } });
    expect(decisionsOf(lastRequestId())).toEqual([
      ['confirmation_requested', 'mcp_client'],
      ['confirmation_cancelled', null],
    ]);
    await client.close();
  });

  it('a client without elicitation gets the phone-side flow as over HTTP', async () => {
    const { client } = await mcpConnect(relay, phone.token!);
    const r = (await client.callTool({ name: 'android_tap_text', arguments: { text: 'Send' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(decisionsOf(lastRequestId())).toEqual([
      ['confirmation_requested', 'phone'],
      ['confirmation_allowed', 'phone'],
    ]);
    await client.close();
  });
});
