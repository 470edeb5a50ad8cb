import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bearer, readEvents, startRelay, type TestRelay } from '../support/harness';
import { startSim, until } from '../support/bridge';
import { call } from '../support/http';
import { BIN, ensureBuilt } from '../support/dist';
import { mcpConnect, textOf } from '../support/mcp';
import { startPairedSim, type SimProcess } from '../support/phone-sim-process';
import { PhoneFlows } from '../../apps/phone-sim/src/phone-flows';
import { PhoneSim } from '../../apps/phone-sim/src/phone-sim';

beforeAll(() => ensureBuilt(), 120_000);

/*
 * android_hand_over on the unmodified app (issue 40, item 5). The app drops `bridge.confirm`
 * (BridgeCommandHandler.kt:270-276) but shows a Threads message as a notification with a reply box and in
 * its Thread view (ProactiveMessageHandler.kt:104-124). The notification's reply carries `reply_to` = the
 * message's id (ProactiveMessageNotifier.kt:66, ProactiveReplyReceiver.kt:57,90); the Thread view's composer
 * sends the thread's chat_id and no reply_to (ChatViewModel.kt:6628). The simulator in app mode plays both.
 */
describe('android_hand_over through a Threads message (the app without bridge.confirm)', () => {
  let relay: TestRelay;
  let app: PhoneSim;
  let flows: PhoneFlows;
  const lines: string[] = [];
  const sims: PhoneSim[] = [];
  const procs: SimProcess[] = [];
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
    app = await startSim(relay, { mode: 'app', deviceName: 'Real App' });
    sims.push(app);
    flows = new PhoneFlows(app, { line: (t) => lines.push(t), raw: () => undefined, backlog: () => 0 });
    await flows.subscribe();
  });
  afterAll(async () => {
    for (const p of procs) p.child.kill('SIGKILL');
    for (const s of sims) s.stop();
    await relay.close();
  });

  const events = () => readEvents(relay.home);
  const decisions = (requestId: string) =>
    events()
      .filter((e) => e.type === 'bridge.safety_decided' && e.data.requestId === requestId)
      .map((e) => e.data.decision);
  /** The hand-over's Threads message, once the app has it (its id is the request id). */
  const asked = async (seen: number) => {
    await until(() => flows.messages.length > seen && flows.messages.at(-1)!.text.startsWith('The agent asks you to take over: '));
    const m = flows.messages.at(-1)!;
    await until(() => relay.loop.models.bridge.pendingConfirmation(m.messageId!) !== undefined);
    await until(() => relay.loop.models.phoneThreads.message(m.messageId!)?.state === 'delivered');
    return m;
  };
  /** Starts a hand-over (Streamable HTTP, the app's own bearer) and gives the pending call and the message the app shows. */
  const start = async (args: Record<string, unknown>, token = app.token!) => {
    const seen = flows.messages.length;
    const { client } = await mcpConnect(relay, token);
    const result = (client.callTool({ name: 'android_hand_over', arguments: args }) as Promise<CallToolResult>).finally(() => client.close());
    return { result, message: await asked(seen), client };
  };

  it('"done" from the notification: the answer, via thread; the reply is taken by the hand-over, not handed to the host', async () => {
    const { result, message } = await start({ message: 'log in to the bank app', timeout_s: 60 });
    expect(message).toMatchObject({
      chatId: 'phone',
      title: 'Take over',
      text: 'The agent asks you to take over: log in to the bank app. Reply "done" when you have finished, or "no" to refuse.',
    });
    // Nothing was sent on the bridge: the app would drop bridge.confirm.
    expect(app.received.filter((f) => f.type === 'bridge.confirm')).toEqual([]);
    await flows.reply('Done!', { chatId: message.chatId, replyTo: message.messageId });
    const r = await result;
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ answer: 'done', device: 'Real App', via: 'thread' });
    expect(JSON.parse(textOf(r))).toEqual({ answer: 'done', device: 'Real App', via: 'thread' });
    const id = message.messageId!;
    expect(decisions(id)).toEqual(['confirmation_requested', 'confirmation_allowed']);
    const reply = events().find((e) => e.type === 'phone.reply_received' && e.data.replyTo === id)!;
    const taken = events().filter((e) => e.type === 'phone.replies_handed' && (e.data.replyIds as string[]).includes(reply.data.replyId as string));
    expect(taken.map((e) => e.data.by)).toEqual([`hand_over:${id}`]);
    // The host platform's poll does not get the hand-over's answer as an ordinary reply.
    const polled = await call(relay, 'GET', '/phone/replies?wait=0');
    expect(polled.body.replies.map((x: { text: string }) => x.text)).not.toContain('Done!');
  });

  it('"no" declines; a reply in the Thread view (no reply_to, same chat) answers too', async () => {
    const a = await start({ message: 'approve the payment' });
    await flows.reply('no', { chatId: a.message.chatId, replyTo: a.message.messageId });
    expect((await a.result).structuredContent).toEqual({ answer: 'declined', device: 'Real App', via: 'thread' });
    expect(decisions(a.message.messageId!)).toEqual(['confirmation_requested', 'confirmation_denied']);

    const b = await start({ message: 'pick the photo' });
    await flows.reply('STOP', { chatId: b.message.chatId, replyTo: null });
    expect((await b.result).structuredContent).toMatchObject({ answer: 'declined', via: 'thread' });
  });

  it('other words: done, with the user’s words as the note', async () => {
    const { result, message } = await start({ message: 'solve the captcha' });
    await flows.reply('I solved it but it asked for my birthday, so I stopped there', { chatId: message.chatId, replyTo: message.messageId });
    expect((await result).structuredContent).toEqual({
      answer: 'done',
      device: 'Real App',
      via: 'thread',
      note: 'I solved it but it asked for my birthday, so I stopped there',
    });
  });

  it('a reply to a different message, or from another phone, does not answer it; the right one then does', async () => {
    const other = await call(relay, 'POST', '/phone/message', { text: 'the build is green' });
    expect(other.status).toBe(200);
    await until(() => flows.messages.some((m) => m.messageId === other.body.message_id));
    const { result, message } = await start({ message: 'unlock the phone' });
    const id = message.messageId!;
    await flows.reply('done', { chatId: 'phone', replyTo: other.body.message_id as string });
    await flows.reply('done', { chatId: 'elsewhere', replyTo: null });
    const stranger = await startSim(relay, { mode: 'app', deviceName: 'Stranger' });
    sims.push(stranger);
    const strangerFlows = new PhoneFlows(stranger, { line: () => undefined, raw: () => undefined, backlog: () => 0 });
    await strangerFlows.reply('done', { chatId: 'phone', replyTo: id });
    expect(relay.loop.models.bridge.pendingConfirmation(id)).toBeDefined();
    // Those were ordinary replies: the host gets them.
    const polled = await call(relay, 'GET', '/phone/replies?wait=0');
    expect(polled.body.replies.filter((x: { text: string }) => x.text === 'done')).toHaveLength(3);
    await flows.reply('ok', { chatId: message.chatId, replyTo: id });
    expect((await result).structuredContent).toMatchObject({ answer: 'done' });
    stranger.stop();
  });

  it('no reply: timed_out when timeout_s passes on the relay’s clock, not before', async () => {
    const { result, message } = await start({ message: 'scan the QR code', timeout_s: 90 });
    const id = message.messageId!;
    relay.clock.advance(89_000);
    await relay.sweep();
    expect(relay.loop.models.bridge.pendingConfirmation(id)).toBeDefined();
    relay.clock.advance(1_000);
    await relay.sweep();
    expect((await result).structuredContent).toMatchObject({ answer: 'timed_out', via: 'thread' });
    expect(decisions(id)).toEqual(['confirmation_requested', 'confirmation_timed_out']);
    // A late reply is an ordinary reply.
    await flows.reply('done', { chatId: message.chatId, replyTo: id });
    expect(events().filter((e) => e.type === 'phone.replies_handed' && e.data.by === `hand_over:${id}`)).toEqual([]);
  });

  it('a hostile reply: too long is refused on the socket and leaves it pending; control characters and a long text make a bounded, clean note', async () => {
    const { result, message } = await start({ message: 'check the inbox' });
    const id = message.messageId!;
    const said = lines.length;
    app.send('proactive', 'proactive.reply', { text: 'd'.repeat(40_000), reply_to: id, chat_id: 'phone' });
    await until(() => lines.slice(said).some((l) => l.startsWith('threads: relay refused (phone.bad_reply)')));
    expect(relay.loop.models.bridge.pendingConfirmation(id)).toBeDefined();
    const text = `\u0000\u001b[31mdone\u0007 ${'x'.repeat(20_000)}\u2028end`;
    await flows.reply(text, { chatId: message.chatId, replyTo: id });
    const out = (await result).structuredContent as { answer: string; note: string };
    expect(out.answer).toBe('done');
    expect(out.note.length).toBeLessThanOrEqual(500);
    expect(out.note.startsWith('[31mdone  xxx')).toBe(true);
    for (const ch of out.note) expect(ch.codePointAt(0)!).toBeGreaterThanOrEqual(0x20);
  });

  it('the MCP request cancelled: the question ends, recorded as cancelled', async () => {
    const seen = flows.messages.length;
    const { client } = await mcpConnect(relay, app.token!);
    const abort = new AbortController();
    const pending = client.callTool({ name: 'android_hand_over', arguments: { message: 'wait for me' } }, undefined, { signal: abort.signal });
    const message = await asked(seen);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await until(() => relay.loop.models.bridge.pendingConfirmation(message.messageId!) === undefined);
    expect(decisions(message.messageId!)).toEqual(['confirmation_requested', 'confirmation_cancelled']);
    await client.close();
  });

  /** A fresh app-mode phone subscribed to Threads (the subscriber is the latest phone to say so). */
  const subscribedSim = async (deviceName: string, again?: PhoneSim) => {
    const sim = again
      ? await new PhoneSim({ relayUrl: relay.url, token: again.token!, mode: 'app', deviceName, deviceId: again.deviceId }).start()
      : await startSim(relay, { mode: 'app', deviceName });
    sims.push(sim);
    const simFlows = new PhoneFlows(sim, { line: () => undefined, raw: () => undefined, backlog: () => 0 });
    await simFlows.subscribe();
    return { sim, flows: simFlows };
  };
  /** The relay has seen the phone's socket close (the bridge forgets the device). */
  const gone = async (sim: PhoneSim) => {
    sim.stop();
    await until(() => relay.loop.models.bridge.device(sim.tokenPrefix!) === undefined);
  };

  it('the phone away mid-hand-over (the user left the app): still pending; back with the same token, its reply answers it', async () => {
    // The app sends `proactive.subscribe` again on every auth.ok (ConnectionViewModel.kt:3591).
    const away = await subscribedSim('Away');
    const { client } = await mcpConnect(relay, app.token!);
    const pending = client.callTool({
      name: 'android_hand_over',
      arguments: { message: 'sign in', device: 'Away', timeout_s: 60 },
    }) as Promise<CallToolResult>;
    await until(() => away.flows.messages.length > 0);
    const id = away.flows.messages[0].messageId!;
    await gone(away.sim);
    expect(relay.loop.models.bridge.pendingConfirmation(id)).toBeDefined();
    expect(decisions(id)).toEqual(['confirmation_requested']);
    const back = await subscribedSim('Away', away.sim);
    expect(back.sim.tokenPrefix).toBe(away.sim.tokenPrefix);
    await back.flows.reply('done', { chatId: 'phone', replyTo: id });
    expect((await pending).structuredContent).toEqual({ answer: 'done', device: 'Away', via: 'thread' });
    expect(decisions(id)).toEqual(['confirmation_requested', 'confirmation_allowed']);
    await client.close();
  });

  it('the phone away past the deadline: timed_out on the relay’s clock; unpaired (away or not): phone_gone', async () => {
    const { client } = await mcpConnect(relay, app.token!);
    const late = await subscribedSim('Late');
    const p1 = client.callTool({
      name: 'android_hand_over',
      arguments: { message: 'one moment', device: 'Late', timeout_s: 30 },
    }) as Promise<CallToolResult>;
    await until(() => late.flows.messages.length > 0);
    await gone(late.sim);
    relay.clock.advance(30_000);
    await relay.sweep();
    expect((await p1).structuredContent).toMatchObject({ answer: 'timed_out', device: 'Late', via: 'thread' });

    const unpaired = await subscribedSim('Unpaired');
    const p2 = client.callTool({ name: 'android_hand_over', arguments: { message: 'one moment', device: 'Unpaired' } }) as Promise<CallToolResult>;
    await until(() => unpaired.flows.messages.length > 0);
    await gone(unpaired.sim);
    expect((await call(relay, 'DELETE', `/sessions/${unpaired.sim.tokenPrefix}`, undefined, bearer(unpaired.sim.token!))).status).toBe(200);
    expect((await p2).structuredContent).toMatchObject({ answer: 'phone_gone', device: 'Unpaired', via: 'thread' });

    const connected = await subscribedSim('Connected');
    const p3 = client.callTool({ name: 'android_hand_over', arguments: { message: 'one moment', device: 'Connected' } }) as Promise<CallToolResult>;
    await until(() => connected.flows.messages.length > 0);
    expect((await call(relay, 'DELETE', `/sessions/${connected.sim.tokenPrefix}`, undefined, bearer(connected.sim.token!))).status).toBe(200);
    expect((await p3).structuredContent).toMatchObject({ answer: 'phone_gone', device: 'Connected' });
    await client.close();
  });

  it('a phone not taking Threads messages is refused', async () => {
    const { client } = await mcpConnect(relay, app.token!);
    // The Threads subscription is now nobody's (or another phone's): the app cannot be asked, and says why.
    const quiet = await startSim(relay, { mode: 'app', deviceName: 'Quiet' });
    sims.push(quiet);
    const r = (await client.callTool({ name: 'android_hand_over', arguments: { message: 'hello', device: 'Quiet' } })) as CallToolResult;
    expect(r).toMatchObject({ isError: true, structuredContent: { ok: false, code: 'bridge.hand_over_unsupported' } });
    expect(textOf(r)).toMatch(/^"Quiet" does not receive Threads messages/);
    await client.close();
  });

  it('Threads off on the relay (the default): refused before anything is asked or recorded', async () => {
    const off = await startRelay();
    try {
      const phone = await startSim(off, { mode: 'app', deviceName: 'Off App' });
      sims.push(phone);
      const { client } = await mcpConnect(off, phone.token!);
      const r = (await client.callTool({ name: 'android_hand_over', arguments: { message: 'hello' } })) as CallToolResult;
      await client.close();
      expect(r).toMatchObject({ isError: true, structuredContent: { ok: false, code: 'bridge.hand_over_unsupported' } });
      expect(textOf(r)).toMatch(/Threads are off on this relay \(PHONE_ENABLED=1 turns them on\)/);
      expect(readEvents(off.home).filter((e) => e.type === 'bridge.safety_decided' || e.type === 'phone.message_posted')).toEqual([]);
    } finally {
      await off.close();
    }
  });

  it('over stdio (`svc relay mcp`) against `svc phone-sim --mode app --reply-to-handover done`', async () => {
    const { sim, token } = await startPairedSim(relay, procs, ['--reply-to-handover', 'done']);
    await sim.waitFor(/threads: subscribed/);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'relay', 'mcp'],
      env: { PATH: process.env.PATH!, RELAY_HOST: '127.0.0.1', RELAY_PORT: String(relay.port), MOBILE_BRIDGE_TOKEN: token() },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-hand-over', version: '1.0.0' });
    try {
      await client.connect(transport);
      const r = (await client.callTool({ name: 'android_hand_over', arguments: { message: 'enter the one-time code' } })) as CallToolResult;
      expect(JSON.parse(textOf(r))).toMatchObject({ answer: 'done', via: 'thread' });
      await sim.waitFor(/hand-over answered/);
      expect(sim.output()).toContain('The agent asks you to take over: enter the one-time code.');
    } finally {
      await client.close();
    }
  });
});
