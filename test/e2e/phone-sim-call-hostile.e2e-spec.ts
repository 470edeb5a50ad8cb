import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { until } from '../support/bridge';
import { ensureBuilt } from '../support/dist';
import { spawnSim, type SimProcess } from '../support/phone-sim-process';

/*
 * The call and the profile inspector against a hostile "relay" (apps/phone-sim/src/phone-call.ts, phone-profiles.ts):
 * the frames the simulator sends are recorded (the app's order: session.start, the mic in 6400-byte chunks with
 * ids from 1, commit, an ack for each id-bearing frame; close 1000 "done" or 1011 "provider error"), and what comes
 * back is garbage, wrong types, escape sequences, floods, a frame past the bound, a socket path off the relay.
 */

jest.setTimeout(90_000);

const ESC = '\u001b';
type Json = Record<string, any>;

type Hostile = {
  url: string;
  /** What the voice socket does once the mic's commit arrived. */
  onCommit: (ws: WebSocket) => void;
  /** The session answer's body. */
  session: Json;
  /** The answer to GET /api/profiles/... (status, body). */
  profileAnswer: () => [number, string];
  voiceFrames: Json[];
  closes: Array<{ code: number; reason: string }>;
  close: () => Promise<void>;
};

async function hostileRelay(): Promise<Hostile> {
  const h: Hostile = {
    url: '',
    onCommit: () => undefined,
    session: { session_id: 'hostile-session', websocket_path: '/voice/realtime-agent/hostile-session' },
    profileAnswer: () => [200, '{}'],
    voiceFrames: [],
    closes: [],
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/voice/realtime-agent/session') {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(h.session));
    }
    const [status, body] = h.profileAnswer();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => {
    if (req.url === '/ws') {
      ws.once('message', () =>
        ws.send(
          JSON.stringify({
            channel: 'system',
            type: 'auth.ok',
            payload: {
              session_token: 'hostile-token-0123456789',
              grants: {},
              profiles: [null, 7, { name: { x: 1 } }, { name: `evil${ESC}[31m`, model: 5, skill_count: 'many' }, ...Array(5000).fill({ name: 'p' })],
            },
          }),
        ),
      );
      return;
    }
    ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as Json;
      h.voiceFrames.push(f);
      if (f.type === 'input_audio.commit') h.onCommit(ws);
    });
    ws.on('close', (code, reason) => h.closes.push({ code, reason: String(reason) }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  h.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h.close = () =>
    new Promise<void>((r) => {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      server.close(() => r());
    });
  return h;
}

describe('svc phone-sim: the call and the profile inspector against a hostile relay', () => {
  let relay: Hostile;
  let sim: SimProcess;
  beforeAll(async () => {
    ensureBuilt();
    relay = await hostileRelay();
    sim = spawnSim(['--relay', relay.url, '--code', 'ABC123', '--mode', 'app', '--interactive']);
    await sim.waitFor(/paired: token prefix hostile-/);
  });
  afterAll(async () => {
    sim.child.kill('SIGKILL');
    await relay.close();
  });

  it("sends the app's frames in the app's order; garbage, escapes and a flood of text are survived, cut and escaped; done is closed 1000", async () => {
    relay.onCommit = (ws) => {
      for (const s of ['not json', 'null', '[1]', '{"type":5}', '{"no":"type"}']) ws.send(s);
      ws.send(JSON.stringify({ type: 'voice.input_transcript.final', text: `heard ${ESC}]0;pwned${ESC}\\ you`, event_id: 1 }));
      ws.send(JSON.stringify({ type: 'svc.tool.started', tool_name: { x: 1 }, event_id: 'two' }));
      for (let i = 0; i < 300; i++) ws.send(JSON.stringify({ type: 'voice.response.delta', delta: 'y'.repeat(1000), event_id: i + 2 }));
      ws.send(JSON.stringify({ type: 'voice.output_audio.delta', audio_base64: 'AAAA', byte_count: -5, audio_event_id: 1, event_id: 400 }));
      ws.send(JSON.stringify({ type: 'voice.output_audio.delta', audio_base64: 7, byte_count: 10, audio_event_id: 2, event_id: 401 }));
      ws.send(JSON.stringify({ type: 'voice.response.done', event_id: 402, metrics: 'x' }));
    };
    const mark = sim.output().length;
    sim.type('call one two three');
    await sim.waitFor(/call: hung up/, mark);
    // The sim prints "hung up" as it closes; its last frames (the acks) reach this relay before the close
    // frame, not before the line: under load the acks were counted while still on the wire (295 of 304).
    await until(() => relay.closes.length === 1);
    const out = sim.output().slice(mark);
    expect(out).not.toContain(ESC);
    expect(out).toContain('call: the relay heard: heard \\u001b]0;pwned\\u001b\\ you');
    // The reply is kept to 4000 characters, printed to 500.
    expect(out).toMatch(/call: the agent replied: y{500}… \(3500 more characters\)/);
    expect(out).toContain('call: 13 bytes of audio in 2 chunk(s)');
    const types = relay.voiceFrames.map((f) => f.type);
    expect(types[0]).toBe('session.start');
    const appends = relay.voiceFrames.filter((f) => f.type === 'input_audio.append');
    expect(appends.map((f) => f.chunk_id)).toEqual(appends.map((_, i) => i + 1));
    expect(appends.every((f) => f.sample_rate === 16000 && Buffer.from(f.audio_base64, 'base64').length <= 6400)).toBe(true);
    expect(types[appends.length + 1]).toBe('input_audio.commit');
    const acks = relay.voiceFrames.filter((f) => f.type === 'client.ack');
    // Only numbers are acked: the string event id is not, and each ack names the frame's own ids.
    expect(acks.length).toBe(1 + 300 + 3);
    expect(acks.at(-2)).toEqual({ type: 'client.ack', event_id: 401, audio_event_id: 2 });
    expect(relay.closes.at(-1)).toEqual({ code: 1000, reason: 'done' });
  });

  it('voice.error ends the call 1011 "provider error"; a transient notice does not; a frame past 4 MiB fails the call and the phone stays up', async () => {
    relay.voiceFrames.length = 0;
    relay.onCommit = (ws) => {
      ws.send(JSON.stringify({ type: 'voice.error', message: 'Cancellation failed: no active response found' }));
      ws.send(JSON.stringify({ type: 'voice.error', message: `provider ${ESC}[2J down` }));
    };
    let mark = sim.output().length;
    sim.type('call hello');
    await sim.waitFor(/call failed: provider \\u001b\[2J down/, mark);
    await until(() => relay.closes.length === 2);
    expect(relay.closes.at(-1)).toEqual({ code: 1011, reason: 'provider error' });

    relay.onCommit = (ws) => ws.send(JSON.stringify({ type: 'voice.response.delta', delta: 'z'.repeat(5 * 1024 * 1024) }));
    mark = sim.output().length;
    sim.type('call hello', 'status');
    await sim.waitFor(/call failed: socket error: .*Max payload size exceeded|call failed: the relay closed the call \(1009\)/, mark);
    await sim.waitFor(/paired as hostile-/, mark);
  });

  it('a socket path off the relay is refused before any socket opens', async () => {
    const before = relay.voiceFrames.length;
    for (const p of ['ws://evil.example/x', '//evil.example/x', '/voice/../../etc', 42]) {
      relay.session = { session_id: 's', websocket_path: p };
      const mark = sim.output().length;
      sim.type('call hello');
      await sim.waitFor(/call failed: the session answer has no usable websocket_path/, mark);
    }
    expect(relay.voiceFrames.length).toBe(before);
    relay.session = { session_id: 'hostile-session', websocket_path: '/voice/realtime-agent/hostile-session' };
  });

  it('profiles: a hostile catalog is kept bounded and escaped; oversized, non-JSON and refused answers are errors, not crashes', async () => {
    let mark = sim.output().length;
    sim.type('profiles', 'status');
    await sim.waitFor(/paired as hostile-/, mark);
    const lines = sim
      .output()
      .slice(mark)
      .split('\n')
      .filter((l) => l.includes('] profile '));
    expect(lines.length).toBe(200);
    expect(lines[0]).toContain('profile evil\\u001b[31m: (no model), 0 skill(s)');

    relay.profileAnswer = () => [200, JSON.stringify({ content: 'x'.repeat(3 * 1024 * 1024) })];
    mark = sim.output().length;
    sim.type('profile work');
    await sim.waitFor(/profile work memory: the answer was larger than 2097152 bytes/, mark);
    relay.profileAnswer = () => [200, 'not json'];
    sim.type('profile work');
    await sim.waitFor(/profile work config: the answer is not JSON/, mark);
    relay.profileAnswer = () => [403, '{}'];
    sim.type(`soul work${ESC}[1m new soul`);
    await sim.waitFor(/SOUL not saved: Unauthorized — re-pair with the relay/, mark);
    relay.profileAnswer = () => [200, JSON.stringify({ content: `# ${ESC}[5mblink`, truncated: true })];
    sim.type('profile work', 'status');
    await sim.waitFor(/profile work SOUL: \d+ characters \(shown in part\): # \\u001b\[5mblink/, mark);
    expect(sim.output().slice(mark)).not.toContain(ESC);
    sim.type('quit');
    expect(await sim.exited).toEqual({ code: 0, signal: null });
  });
});
