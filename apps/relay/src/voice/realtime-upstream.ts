import { WebSocket } from 'ws';
import { parseJsonObject } from '../common/sockets/json-object';
import type { VoiceConfig } from '../common/config/relay-config';
import type { PcmStream } from './pcm-stream';
import { errorFieldText } from './upstream-error';
import { VoiceProviderError } from './voice-provider';

/**
 * A socket to the provider's realtime API (OpenAI `/realtime`: the key in the header, never in the URL),
 * and a promise that holds once it is open and its `session.update` (16-bit PCM both ways, whisper
 * transcription of the input, no server-side turn detection, plus `session`) was sent.
 */
export function openProviderRealtime(cfg: VoiceConfig, model: string, session: Record<string, unknown>): { sock: WebSocket; opened: Promise<void> } {
  if (!cfg.openaiKey)
    throw new VoiceProviderError(
      'voice.no_api_key',
      'no API key is available for the openai provider (set VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY)',
      'unavailable',
    );
  const url = `${cfg.openaiBaseUrl.replace(/^http/, 'ws')}/realtime?model=${encodeURIComponent(model)}`;
  const sock = new WebSocket(url, {
    headers: { authorization: `Bearer ${cfg.openaiKey}`, 'openai-beta': 'realtime=v1' },
    maxPayload: 16 * 1024 * 1024,
  });
  const opened = new Promise<void>((resolve, reject) => {
    sock.once('open', () => {
      sock.send(
        JSON.stringify({
          type: 'session.update',
          session: {
            modalities: ['audio', 'text'],
            input_audio_format: 'pcm16',
            output_audio_format: 'pcm16',
            input_audio_transcription: { model: 'whisper-1' },
            turn_detection: null,
            ...session,
          },
        }),
      );
      resolve();
    });
    sock.once('unexpected-response', (_req, res) =>
      reject(new VoiceProviderError('voice.provider_error', `the realtime provider answered ${res.statusCode ?? 0}`)),
    );
    sock.once('error', (e) =>
      reject(new VoiceProviderError('voice.provider_unreachable', `the realtime provider could not be reached: ${e.message}`)),
    );
  });
  return { sock, opened };
}

/** Provider audio chunks waiting for the reader; past this the provider's socket is paused until it catches up. */
const MAX_QUEUED = 64;

type Pending = { queue: Array<Buffer | null | Error>; wake: (() => void) | null; transcript: string | null };

/**
 * One realtime session's socket to the provider's realtime API (OpenAI `/realtime`), held for the session:
 * the client's mic audio is forwarded as `input_audio_buffer.append/commit`, each response is asked with
 * `response.create` (after a `conversation.item.create` when the client typed text) and read back as
 * 24 kHz PCM deltas and the spoken transcript. What the provider says outside a response (the input
 * transcript, errors) goes to `onEvent` as relay frames.
 */
export class RealtimeUpstream {
  private readonly sock: WebSocket;
  private readonly opened: Promise<void>;
  private pending: Pending | null = null;
  private closed = false;

  constructor(
    cfg: VoiceConfig,
    voice: string,
    model: string,
    private readonly onEvent: (frame: Record<string, unknown>) => void,
  ) {
    ({ sock: this.sock, opened: this.opened } = openProviderRealtime(cfg, model, { voice }));
    this.opened.catch(() => undefined);
    this.sock.on('message', (data) => this.onMessage(String(data)));
    this.sock.on('error', () => undefined);
    this.sock.on('close', () => {
      this.closed = true;
      this.push(this.pending ? new VoiceProviderError('voice.provider_error', 'the realtime provider closed the connection mid-response') : null);
    });
  }

  private push(x: Buffer | null | Error): void {
    const p = this.pending;
    if (!p) return;
    p.queue.push(x);
    // A reader that waits (back-pressure, a session held for a resume) pauses the provider's socket.
    if (p.queue.length > MAX_QUEUED) this.sock.pause();
    p.wake?.();
  }

  private onMessage(text: string): void {
    // Validated before any field is read: a provider sending `null` costs this session an error, nothing more.
    const m = parseJsonObject(text);
    if (m === null || typeof m.type !== 'string') {
      const err = new VoiceProviderError(
        'voice.provider_bad_frame',
        'the realtime provider sent a frame that is not a JSON object with a type; dropped',
      );
      if (this.pending) this.push(err);
      else this.onEvent({ type: 'voice.error', message: err.message, code: err.code });
      return;
    }
    switch (m.type) {
      case 'response.audio.delta':
        if (typeof m.delta === 'string') this.push(Buffer.from(m.delta, 'base64'));
        return;
      case 'response.audio_transcript.done':
        if (this.pending && typeof m.transcript === 'string') this.pending.transcript = m.transcript;
        return;
      case 'response.done':
        this.push(null);
        return;
      case 'conversation.item.input_audio_transcription.completed':
        if (typeof m.transcript === 'string') this.onEvent({ type: 'voice.input_transcript.final', text: m.transcript });
        return;
      case 'error': {
        const err = new VoiceProviderError('voice.provider_error', `the realtime provider: ${errorFieldText(m.error)}`.slice(0, 300));
        if (this.pending) this.push(err);
        else this.onEvent({ type: 'voice.error', message: err.message, code: err.code });
        return;
      }
      default:
        return;
    }
  }

  private async send(frame: Record<string, unknown>): Promise<void> {
    await this.opened;
    if (this.closed || this.sock.readyState !== this.sock.OPEN)
      throw new VoiceProviderError('voice.provider_error', 'the realtime provider connection is closed');
    this.sock.send(JSON.stringify(frame));
  }

  appendAudio(base64: string): Promise<void> {
    return this.send({ type: 'input_audio_buffer.append', audio: base64 });
  }

  commitAudio(): Promise<void> {
    return this.send({ type: 'input_audio_buffer.commit' });
  }

  /** One response (after the typed `text`, if any): its audio as it streams, then its spoken transcript. */
  respond(text: string | null): PcmStream & { transcript: () => string | null } {
    const p: Pending = { queue: [], wake: null, transcript: null };
    this.pending = p;
    const start = (async () => {
      if (text)
        await this.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      await this.send({ type: 'response.create', response: { modalities: ['audio', 'text'] } });
    })();
    const chunks = async function* (this: RealtimeUpstream): AsyncIterable<Buffer> {
      try {
        await start;
        for (;;) {
          if (p.queue.length === 0) await new Promise<void>((r) => (p.wake = r));
          p.wake = null;
          const x = p.queue.shift();
          if (p.queue.length <= MAX_QUEUED / 4) this.sock.resume();
          if (x === undefined) continue;
          if (x === null) return;
          if (x instanceof Error) throw x;
          yield x;
        }
      } finally {
        if (this.pending === p) this.pending = null;
      }
    }.call(this);
    return {
      sampleRate: 24000,
      chunks,
      stop: () => {
        void this.send({ type: 'response.cancel' }).catch(() => undefined);
        this.push(null);
      },
      transcript: () => p.transcript,
    };
  }

  close(): void {
    this.closed = true;
    this.sock.terminate();
  }
}
