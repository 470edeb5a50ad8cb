import WebSocket from 'ws';
import type { TestRelay } from './harness';

export type Json = Record<string, any>;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(pred: () => boolean, ms = 15_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * A voice socket driven the way the phone app drives one (Codename-11/hermes-relay
 * app/src/main/kotlin/com/hermesandroid/relay/network/relay/RelayVoiceClient.kt):
 * - every frame is parsed as `parseRealtimeEvent` does (2961-3049): `metrics` must be an object when present;
 * - the resume cursor (`lastEventId`) advances on every `event_id` except `voice.session.*` and
 *   `voice.replay.*` frames (`shouldAdvanceResumeEventCursor`, 2862-2866); `lastAudioEventId` on every
 *   `audio_event_id`, `lastPlayedAudioEventId` on audio deltas (977-993);
 * - each frame is acknowledged with `client.ack {event_id, audio_event_id?, played_audio_event_id?,
 *   input_chunk_id?}` (`sendClientAck`, 2844-2860), unless `ack: false` (a client that never acks);
 * - `resume()` sends `session.resume {resume_token, last_event_id, last_audio_event_id,
 *   last_played_audio_event_id, last_input_chunk_id}` first thing on a new socket (957, 1742-1743).
 */
export class AppVoiceSocket {
  readonly frames: Json[] = [];
  lastEventId = 0;
  lastAudioEventId = 0;
  lastPlayedAudioEventId = 0;
  lastInputChunkId = 0;
  ws!: WebSocket;
  closed!: Promise<{ code: number; reason: string }>;
  status: number | null = null;

  constructor(
    private readonly relay: TestRelay,
    readonly path: string,
    private readonly headers: Record<string, string>,
    private readonly ack = true,
  ) {}

  /** Opens a socket (a new one each call); resolves with the HTTP status of the upgrade (101 when it opened). */
  open(onOpen?: (ws: WebSocket) => void): Promise<number> {
    const ws = new WebSocket(`${this.relay.url.replace('http', 'ws')}${this.path}`, { headers: this.headers });
    this.ws = ws;
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    ws.on('message', (d) => this.onMessage(ws, String(d)));
    return new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve((this.status = res.statusCode ?? 0)));
      ws.on('open', () => {
        onOpen?.(ws);
        resolve((this.status = 101));
      });
      ws.on('error', () => undefined);
    });
  }

  /** A dropped connection (no close frame: the relay sees 1006), as when the phone changes networks. */
  drop(): Promise<unknown> {
    this.ws.terminate();
    return this.closed;
  }

  /** A new socket that claims the session with the app's session.resume. */
  resume(token: string, extra: Json = {}): Promise<number> {
    return this.open((ws) =>
      ws.send(
        JSON.stringify({
          type: 'session.resume',
          resume_token: token,
          last_event_id: this.lastEventId,
          last_audio_event_id: this.lastAudioEventId,
          last_played_audio_event_id: this.lastPlayedAudioEventId,
          last_input_chunk_id: this.lastInputChunkId,
          ...extra,
        }),
      ),
    );
  }

  send(frame: Json): void {
    this.ws.send(JSON.stringify(frame));
  }

  of(type: string): Json[] {
    return this.frames.filter((f) => f.type === type);
  }

  has(type: string): boolean {
    return this.frames.some((f) => f.type === type);
  }

  private onMessage(ws: WebSocket, text: string): void {
    if (ws !== this.ws) return; // a stale socket's frame, ignored as the app ignores it
    const f = JSON.parse(text) as Json;
    if (f.metrics !== undefined && (typeof f.metrics !== 'object' || f.metrics === null || Array.isArray(f.metrics)))
      throw new Error(`parseRealtimeEvent: metrics must be an object, got ${JSON.stringify(f.metrics)}`);
    this.frames.push(f);
    const type = String(f.type);
    if (typeof f.event_id === 'number' && !type.startsWith('voice.session.') && !type.startsWith('voice.replay.'))
      this.lastEventId = Math.max(this.lastEventId, f.event_id);
    if (typeof f.audio_event_id === 'number') this.lastAudioEventId = Math.max(this.lastAudioEventId, f.audio_event_id);
    const audio = type === 'voice.audio.delta' || type === 'voice.output_audio.delta';
    if (audio && typeof f.audio_event_id === 'number') this.lastPlayedAudioEventId = Math.max(this.lastPlayedAudioEventId, f.audio_event_id);
    if (typeof f.input_chunk_id === 'number') this.lastInputChunkId = Math.max(this.lastInputChunkId, f.input_chunk_id);
    if (!this.ack) return;
    const ackable = [f.event_id, f.audio_event_id, f.input_chunk_id].some((v) => typeof v === 'number');
    if (ackable && ws.readyState === ws.OPEN)
      ws.send(
        JSON.stringify({
          type: 'client.ack',
          ...(typeof f.event_id === 'number' ? { event_id: f.event_id } : {}),
          ...(typeof f.audio_event_id === 'number' ? { audio_event_id: f.audio_event_id } : {}),
          ...(audio ? { played_audio_event_id: f.audio_event_id } : {}),
          ...(typeof f.input_chunk_id === 'number' ? { input_chunk_id: f.input_chunk_id } : {}),
        }),
      );
  }
}

/** The stream frames a client got, replays folded in: each event id once, in order (what the app ends up with). */
export function streamOf(frames: Json[]): Json[] {
  const seen = new Map<number, Json>();
  for (const f of frames) {
    const type = String(f.type);
    if (type.startsWith('voice.session.') || type.startsWith('voice.replay.')) continue;
    if (typeof f.event_id === 'number' && !seen.has(f.event_id)) seen.set(f.event_id, f);
  }
  return [...seen.values()].sort((a, b) => a.event_id - b.event_id);
}

/**
 * A stand-in for the agent host's API (`POST /v1/chat/completions` with `stream: true`), answering as the
 * hermes API server streams: OpenAI chunks with its own `event: hermes.tool.progress` events between them
 * (`{tool, emoji, label, toolCallId, status: running|completed}`). `hold` keeps the run open after the tool
 * started until `release()`.
 */
export async function streamingAgent() {
  const http = await import('node:http');
  let release: () => void = () => undefined;
  const agent = {
    calls: [] as Array<{ session: string | undefined; auth: string | undefined; body: Json }>,
    hold: false,
    answer: 'It is sunny in Lisbon.',
    release: () => release(),
    url: '',
    server: http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Json;
        agent.calls.push({ session: req.headers['x-hermes-session-id'] as string | undefined, auth: req.headers.authorization, body });
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const data = (o: Json) => res.write(`data: ${JSON.stringify(o)}\n\n`);
        const tool = (o: Json) => res.write(`event: hermes.tool.progress\ndata: ${JSON.stringify(o)}\n\n`);
        data({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant' } }] });
        tool({ tool: 'web_search', emoji: '🔍', label: 'weather in\nLisbon', toolCallId: 'call_1', status: 'running' });
        tool({ tool: '_thinking', toolCallId: 'call_x', status: 'running' });
        const finish = () => {
          tool({ tool: 'web_search', toolCallId: 'call_1', status: 'completed' });
          res.write(': keepalive\n\n');
          const half = Math.floor(agent.answer.length / 2);
          data({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: agent.answer.slice(0, half) } }] });
          data({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: agent.answer.slice(half) }, finish_reason: 'stop' }] });
          res.end('data: [DONE]\n\n');
        };
        if (agent.hold) release = finish;
        else finish();
      });
    }),
    close: async () => {
      agent.server.closeAllConnections();
      await new Promise((r) => agent.server.close(r));
    },
  };
  await new Promise<void>((r) => agent.server.listen(0, '127.0.0.1', r));
  agent.url = `http://127.0.0.1:${(agent.server.address() as import('node:net').AddressInfo).port}`;
  return agent;
}
