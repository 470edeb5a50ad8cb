import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { runPhoneSim } from '../../apps/relay/src/cli/phone-sim';
import { until } from '../support/bridge';
import { ensureBuilt } from '../support/dist';
import { nextCode, readEvents, registerCode, startRelay, type TestRelay } from '../support/harness';
import { spawnSim, type SimProcess } from '../support/phone-sim-process';

/*
 * `svc phone-sim` is a client, and its peers are hostile too: a relay (or anything claiming to be one) may send
 * frames that are not envelopes, fields of the wrong type, floods and frames past any bound; an operator (or a
 * script) may pipe anything into its prompt. It stays up, keeps a bounded tail, never lets peer text drive the
 * operator's terminal, and exits with a sensible status.
 */

jest.setTimeout(90_000);

const ESC = '\u001b';

/** A "relay" that pairs anyone and then says whatever the test makes it say. */
async function hostileRelay(): Promise<{ url: string; phone: Promise<WebSocket>; frames: Array<Record<string, any>>; close: () => Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  const frames: Array<Record<string, any>> = [];
  const phone = new Promise<WebSocket>((resolve) =>
    wss.on('connection', (ws) => {
      ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
      ws.once('message', () => {
        ws.send(JSON.stringify({ channel: 'system', type: 'auth.ok', payload: { session_token: 'hostile-token-0123456789', grants: [] } }));
        resolve(ws);
      });
    }),
  );
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((r) => {
      for (const c of wss.clients) c.terminate();
      wss.close(() => r());
    });
  return { url, phone, frames, close };
}

describe('svc phone-sim against a hostile relay', () => {
  const sims: SimProcess[] = [];
  const closers: Array<() => Promise<void>> = [];
  beforeAll(() => ensureBuilt());
  afterAll(async () => {
    for (const s of sims) s.child.kill('SIGKILL');
    for (const c of closers) await c();
  });

  it.each(['legacy', 'app'])(
    '%s mode: garbage, wrong types, a flood and escape sequences leave it up and bounded; a frame past 8 MiB ends it with 1',
    async (mode) => {
      const relay = await hostileRelay();
      closers.push(relay.close);
      const sim = spawnSim(['--relay', relay.url, '--code', 'ABC123', '--mode', mode, '--interactive']);
      sims.push(sim);
      const ws = await relay.phone;
      await sim.waitFor(/paired: token prefix hostile-/);
      const raw = (s: string) => ws.send(s);
      const frame = (channel: unknown, type: unknown, payload: unknown) => raw(JSON.stringify({ channel, type, id: 'x', payload }));
      raw('not json at all');
      raw('null');
      raw('[1,2,3]');
      raw('"a string"');
      raw(`${'['.repeat(5000)}${']'.repeat(5000)}`);
      frame(7, 'auth.ok', {});
      frame('system', 'auth.ok', { session_token: { nested: true } });
      frame('system', 'error', { message: { not: 'text' } });
      frame('system', 'session.revoked', null);
      frame('bridge', 'bridge.command', { request_id: {}, method: 5, path: null, body: 'str', params: [1] });
      frame('bridge', 'bridge.command', null);
      frame('bridge', 'bridge.confirm', { request_id: ['x'], verb: null, path: 9 });
      frame('proactive', 'phone.message', null);
      frame('proactive', 'phone.message', { text: { evil: true }, chat_id: [] });
      frame('proactive', 'proactive.backlog.complete', { count: 'lots' });
      frame('proactive', 'proactive.reply.ack', { client_msg_id: 12 });
      frame('terminal', 'terminal.output', { session_name: null, data: 42 });
      frame('terminal', 'terminal.detached', { reason: {} });
      frame('notifications', 'whatever', 'payload is a string');
      // Peer text that would drive the operator's terminal (a title change, a bell, colours), and a huge one.
      frame('proactive', 'phone.message', { chat_id: `c${ESC}]0;pwned\u0007`, text: `${ESC}[31mred${ESC}[0m ${'x'.repeat(200_000)}` });
      // A flood: the phone keeps the newest 50.
      for (let i = 0; i < 2000; i++) frame('proactive', 'phone.message', { chat_id: 'flood', message_id: `m${i}`, text: `message ${i}` });
      frame('proactive', 'phone.message', { chat_id: 'flood', message_id: 'last', text: 'the last one' });
      await sim.waitFor(/thread flood: the last one/);

      sim.type('status');
      await sim.waitFor(/threads: not subscribed, 50 message\(s\), newest in flood/);
      const out = sim.output();
      expect(out).toContain('\\u001b[31mred\\u001b[0m');
      expect(out).toMatch(/characters\)/);
      expect(out).not.toContain(ESC);
      expect(out).not.toContain('hostile-token-0123456789');
      expect(out.length).toBeLessThan(400_000);
      // It still answers: the reply goes to the newest message it kept.
      sim.type('reply got them');
      await until(() => relay.frames.some((f) => f.type === 'proactive.reply'), 10_000);
      expect(relay.frames.find((f) => f.type === 'proactive.reply')?.payload).toMatchObject({ text: 'got them', chat_id: 'flood', reply_to: 'last' });

      // A frame past the bound is not read into memory: the socket is dropped, the simulator says so and exits 1.
      raw(JSON.stringify({ channel: 'proactive', type: 'phone.message', payload: { text: 'y'.repeat(9 * 1024 * 1024) } }));
      expect((await sim.exited).code).toBe(1);
      expect(sim.output()).toMatch(/socket error: Max payload size exceeded[\s\S]*closed \(1006\)/);
    },
  );

  it('an auth.ok without a session token is a failed pairing: exit 1, nothing kept', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((r) => wss.once('listening', r));
    closers.push(
      () =>
        new Promise<void>((r) => {
          for (const c of wss.clients) c.terminate();
          wss.close(() => r());
        }),
    );
    wss.on('connection', (ws) =>
      ws.once('message', () => ws.send(JSON.stringify({ channel: 'system', type: 'auth.ok', payload: { session_token: 12345 } }))),
    );
    const sim = spawnSim(['--relay', `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, '--code', 'ABC123', '--notify', 'a|b']);
    sims.push(sim);
    expect((await sim.exited).code).toBe(1);
    expect(sim.output()).toMatch(/phone-sim: auth\.ok without a session token/);
  });
});

describe('svc phone-sim: hostile input at its prompt and on its command line', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    ensureBuilt();
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
  });
  afterAll(() => relay.close());

  it('an over-long line is refused whole, control characters are shown not obeyed, bad arguments are answered, a burst of lines is all taken in order, end of input quits 0', async () => {
    const code = nextCode();
    await registerCode(relay, code);
    const sim = spawnSim(['--relay', relay.url.replace('http', 'ws'), '--code', code, '--mode', 'app', '--interactive', '--quiet']);
    // A line of 200 000 characters, written in pieces: never kept, never run (it would post a notification).
    sim.child.stdin!.write('notify huge | ');
    for (let i = 0; i < 20; i++) sim.child.stdin!.write('z'.repeat(10_000));
    sim.type('', 'status');
    await sim.waitFor(/line longer than 65536 characters: ignored up to its end[\s\S]*paired as/);
    sim.type(
      `${ESC}]0;pwned\u0007`,
      'shell 99999x5',
      'reply hello',
      'master maybe',
      'threads sideways',
      'hear /nonexistent/file.wav',
      'hear /dev',
      'say ',
    );
    await sim.waitFor(/unknown command "\\u001b\]0;pwned\\u0007"/);
    await sim.waitFor(/shell takes COLSxROWS/);
    await sim.waitFor(/failed: no Thread message to reply to yet/);
    await sim.waitFor(/master takes on or off/);
    await sim.waitFor(/threads takes on or off/);
    await sim.waitFor(/voice refused: ENOENT[\s\S]*voice refused: \/dev is not a file[\s\S]*voice refused: synthesize: text is blank/);
    // More lines at once than the prompt holds waiting: it pauses its input instead of piling them up, and loses none.
    const before = sim.output().length;
    sim.type(...Array.from({ length: 300 }, (_, i) => `clip n${i}`), 'clip get');
    await sim.waitFor(/phone clipboard: n299/, before);
    expect(
      sim
        .output()
        .slice(before)
        .match(/copied \d+ characters on the phone/g),
    ).toHaveLength(300);
    sim.child.stdin!.end();
    expect(await sim.exited).toEqual({ code: 0, signal: null });
    expect(sim.output()).not.toContain(ESC);
    expect(readEvents(relay.home).filter((e) => e.type === 'notification.posted')).toHaveLength(0);
  });

  it('a wrong command line is a usage error (2) before anything connects', async () => {
    const lines: string[] = [];
    const run = (...args: string[]) => runPhoneSim(['--relay', 'ws://127.0.0.1:9', '--code', 'ABC123', ...args], (l) => lines.push(l));
    expect(await run('--bogus', 'x')).toBe(2);
    expect(lines.join('\n')).toMatch(/unknown option "--bogus"/);
    expect(await run('--chat', 'ops')).toBe(2);
    expect(await run('--notify', '|')).toBe(2);
    expect(await run('--audio-out', '/tmp/x.mp3')).toBe(2);
    expect(await run('--code', 'OTHER1')).toBe(2);
    expect(await run('--shell')).toBe(2);
    expect(lines.join('\n')).toMatch(/--shell needs a value/);
    expect(await run('stray')).toBe(2);
  });
});
