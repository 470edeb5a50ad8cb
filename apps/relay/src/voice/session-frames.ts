import { DomainError, MAX_INPUT_AUDIO_BYTES, MAX_TTS_CHARS } from '@svc/domain';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '@svc/events';
import type { RawData, WebSocket } from 'ws';
import type { RelayConfig } from '../common/config/relay-config';
import { parseFrame } from '../common/sockets/parse-frame';
import { NativeAgentLink } from './native-agent';
import { metricsOf, pcm16Resampled } from './pcm-stream';
import type { RealtimeAgentBroker } from './realtime-agent';
import { RealtimeUpstream } from './realtime-upstream';
import type { SessionStream } from './session-stream';
import { sanitizeForSpeech } from './speech-text';
import { AckFrame, ConfirmFrame, InputAudioFrame, ResponseCreateFrame } from './voice-frames.dto';
import { VoiceProviderError } from './voice-provider';
import type { AgentSession, OutputSession, RealtimeSession, VoiceSession } from './voice-session';
import { VoiceWire } from './voice-wire';

/** What the frames need of the sessions (VoiceSessions). */
export type FrameHost = {
  /** The session's caller may still use it (checked on every frame). */
  allowed(s: VoiceSession): boolean;
  cut(s: VoiceSession, reason: string): void;
  /** `session.resume` (or `session.start` with a token) on the socket that holds the session (voice-resume.ts). */
  claim(s: VoiceSession, ws: WebSocket, m: Record<string, unknown>): void;
};

const codeOf = (err: unknown, fallback: string): string => (err as { code?: string }).code ?? fallback;
/** `response.create`'s text (`prompt` is read too), or ''. */
const said = (f: ResponseCreateFrame): string => f.text ?? f.prompt ?? '';

/**
 * A voice session's socket protocol: the client's frames (`session.*`, `client.ack`, `input_audio.*`,
 * `response.*`, the agent's `<brand>.*`), each checked and handled in the order it came; the session's
 * ready frame; and the spoken response of the output and realtime sessions. The realtime agent's turns
 * go to its broker (realtime-agent.ts) or, with a realtime provider, to its native engine (native-agent.ts).
 */
export class SessionFrames {
  constructor(
    private readonly config: RelayConfig,
    private readonly wire: VoiceWire,
    private readonly stream: SessionStream,
    private readonly agent: RealtimeAgentBroker,
    private readonly now: () => number,
    private readonly host: FrameHost,
  ) {}

  /** `voice.session.ready`: what the session speaks with, and where its stream stands (a resume starts from here). */
  ready(s: VoiceSession) {
    return {
      type: 'voice.session.ready',
      protocol: this.wire.protocol(s.kind),
      session_id: s.id,
      provider: s.provider,
      model: s.model,
      voice: s.voice,
      sample_rate: s.sampleRate,
      ...(s.kind === 'output' ? { output_mode: 'streaming_tts_renderer' } : {}),
      resume_supported: true,
      resume_ttl_ms: this.config.voice.resumeGraceSeconds * 1000,
      last_event_id: s.eventSeq,
      last_audio_event_id: s.audioSeq,
      profile: s.profile,
    };
  }

  onFrame(s: VoiceSession, data: RawData, isBinary: boolean): void {
    // Checked on every frame at the clock's now, not only when the sweep has written the expiry or a PATCH the loss.
    if (!this.host.allowed(s)) return this.host.cut(s, 'session expired, revoked or without the voice grant');
    this.stream.touch(s);
    if (isBinary) return this.stream.error(s, 'unsupported websocket frame: send JSON text');
    let msg: unknown;
    const text = String(data);
    if (jsonDepthExceeds(text)) return this.stream.error(s, `message nests JSON deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      msg = JSON.parse(text);
    } catch {
      return this.stream.error(s, 'invalid JSON message');
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return this.stream.error(s, 'message must be a JSON object');
    const m = msg as Record<string, unknown>;
    switch (m.type) {
      case 'session.start':
        if (typeof m.resume_token === 'string') return this.host.claim(s, s.ws!, m);
        return this.stream.send(s, this.ready(s));
      case 'session.resume':
        // On the socket that already holds the session: the same checks, and a replay of what it says it lacks.
        return this.host.claim(s, s.ws!, m);
      case 'client.ack':
      case 'playback.drained':
        return this.ack(s, m);
      case 'session.close':
        s.finalClose = 'closed';
        s.ws?.close(1000, 'session closed');
        return;
    }
    switch (s.kind) {
      case 'output':
        return this.onOutputFrame(s, m);
      case 'realtime':
        return this.onRealtimeFrame(s, m);
      case 'realtime_agent':
        return s.engine.realtime ? this.onNativeFrame(s, m) : this.onAgentFrame(s, m);
    }
  }

  private onOutputFrame(s: OutputSession, m: Record<string, unknown>): void {
    switch (m.type) {
      case 'response.create':
        if (s.busy || s.responded) return this.stream.error(s, s.busy ? 'response already running' : 'response already completed');
        void this.respond(s, m);
        return;
      case 'response.cancel':
        return this.cancel(s);
      default:
        return this.unsupported(s, m);
    }
  }

  private onRealtimeFrame(s: RealtimeSession, m: Record<string, unknown>): void {
    switch (m.type) {
      case 'input_audio.append':
        return this.inputAudio(s, m);
      case 'response.create':
        if (s.busy) return this.stream.error(s, 'response already running');
        void this.respond(s, m);
        return;
      case 'input_audio.commit':
        if (!s.engine.realtime)
          return this.stream.error(
            s,
            'the offline provider has no realtime input: its input audio is acknowledged, not heard; send text in response.create',
          );
        this.upstreamOf(s)
          ?.commitAudio()
          .catch((err: Error) => this.stream.error(s, err.message, { code: codeOf(err, 'voice.provider_error') }));
        return;
      case 'response.cancel':
        return this.cancel(s);
      default:
        return this.unsupported(s, m);
    }
  }

  /** realtime_agent with the fallback engine: turns go to the broker. */
  private onAgentFrame(s: AgentSession, m: Record<string, unknown>): void {
    if (this.onBrandedFrame(s, m)) return;
    switch (m.type) {
      case 'input_audio.append':
        return this.inputAudio(s, m);
      case 'response.create': {
        if (s.busy) return this.stream.error(s, 'response already running');
        const f = parseFrame(ResponseCreateFrame, m);
        void this.agent.turn(s, f.ok ? said(f.value) : '');
        return;
      }
      case 'input_audio.commit':
        if (s.busy) return this.stream.error(s, 'response already running');
        void this.agent.turnFromAudio(s);
        return;
      case 'response.cancel':
        return this.cancel(s);
      default:
        return this.unsupported(s, m);
    }
  }

  /** realtime_agent with a realtime provider: frames go to the provider-native engine. */
  private onNativeFrame(s: AgentSession, m: Record<string, unknown>): void {
    if (this.onBrandedFrame(s, m)) return;
    if (m.type === 'input_audio.append') return this.inputAudio(s, m);
    const link = this.nativeOf(s);
    if (!link) return;
    switch (m.type) {
      case 'input_audio.commit':
        s.responded = true;
        return link.commit();
      case 'response.create': {
        const f = parseFrame(ResponseCreateFrame, m);
        const text = f.ok ? (f.value.text ?? '').trim() : '';
        if (text === '') return this.stream.error(s, 'response.create missing text (or send input_audio.commit)');
        if (text.length > MAX_TTS_CHARS) return this.stream.error(s, `text exceeds ${MAX_TTS_CHARS} characters`, { code: 'voice.text_too_long' });
        s.responded = true;
        s.chars += text.length;
        return link.say(text);
      }
      case 'response.cancel':
        return link.cancel();
      default:
        return this.unsupported(s, m);
    }
  }

  /** The agent frames the app sends in its spelling (`hermes.confirm`); true when `m` was one. */
  private onBrandedFrame(s: AgentSession, m: Record<string, unknown>): boolean {
    if (VoiceWire.isBranded(m.type, 'confirm')) {
      const f = parseFrame(ConfirmFrame, m);
      // The agent API this relay drives asks no confirmations: nothing waits for this answer.
      this.stream.send(s, {
        type: this.wire.frame('confirmation.forwarded'),
        confirmation_id: f.ok ? (f.value.confirmation_id ?? null) : null,
        forwarded: false,
        message: 'nothing is waiting for a confirmation',
      });
      return true;
    }
    if (VoiceWire.isBranded(m.type, 'result.respeak')) {
      this.stream.send(s, { type: this.wire.frame('result.respeak_unavailable'), message: 'this relay runs no background tasks to repeat' });
      return true;
    }
    return false;
  }

  private unsupported(s: VoiceSession, m: Record<string, unknown>): void {
    this.stream.error(s, `unsupported message type: ${String(m.type).slice(0, 40)}`);
  }

  private cancel(s: VoiceSession): void {
    s.abort?.abort();
    s.stream?.stop();
  }

  /** `client.ack {event_id}` (the app acks every frame): frames up to it need not be held for a replay. */
  private ack(s: VoiceSession, m: Record<string, unknown>): void {
    const f = parseFrame(AckFrame, m);
    if (!f.ok) return;
    s.acking = true;
    s.replay.ack(f.value.event_id);
  }

  /**
   * `input_audio.append {audio_base64, sample_rate?, chunk_id?}` for every session that takes audio: checked,
   * counted against the session's cap, then kept (the fallback agent transcribes it at commit) or forwarded
   * to the provider's realtime socket at its 24 kHz (the app records 16 kHz), and acknowledged. A chunk the
   * app sends again after a resume (a `chunk_id` already taken) is acknowledged, not used twice.
   */
  private inputAudio(s: RealtimeSession | AgentSession, m: Record<string, unknown>): void {
    const f = parseFrame(InputAudioFrame, m);
    if (!f.ok) return this.stream.error(s, f.error.message);
    const { audio_base64: audio, sample_rate: rate, chunk_id: chunkId } = f.value;
    // The pattern allows two '=' at most, at the end.
    const n = Math.floor(((audio.length - (audio.endsWith('==') ? 2 : audio.endsWith('=') ? 1 : 0)) * 3) / 4);
    const chunk = chunkId === undefined ? {} : { input_chunk_id: chunkId };
    if (chunkId !== undefined && chunkId <= s.maxInputChunkId)
      return this.stream.send(s, {
        type: 'voice.input_audio.received',
        byte_count: 0,
        total_bytes: s.inputBytes,
        sample_rate: rate,
        duplicate: true,
        ...chunk,
      });
    if (s.inputBytes + n > MAX_INPUT_AUDIO_BYTES)
      return this.stream.error(s, `input audio exceeds ${MAX_INPUT_AUDIO_BYTES} bytes in this session`, { code: 'voice.audio_too_large' });
    s.inputBytes += n;
    if (chunkId !== undefined) s.maxInputChunkId = chunkId;
    const at24k = () => (rate === 24000 ? audio : pcm16Resampled(Buffer.from(audio, 'base64'), rate, 24000).toString('base64'));
    if (s.kind === 'realtime_agent' && s.engine.realtime) this.nativeOf(s)?.appendAudio(at24k());
    else if (s.kind === 'realtime' && s.engine.realtime)
      this.upstreamOf(s)
        ?.appendAudio(at24k())
        .catch((err: Error) => this.stream.error(s, err.message, { code: codeOf(err, 'voice.provider_error') }));
    else if (s.kind === 'realtime_agent') {
      s.inputPcm.push(Buffer.from(audio, 'base64'));
      s.inputRate = rate;
    }
    this.stream.send(s, { type: 'voice.input_audio.received', byte_count: n, total_bytes: s.inputBytes, sample_rate: rate, ...chunk });
  }

  /**
   * One spoken response of an output or realtime session: the text (or, with a realtime provider, the
   * audio committed) rendered by the provider and streamed as `voice.audio.delta` frames, then
   * `voice.audio.done` and `voice.response.done` (an output session responds once).
   */
  private async respond(s: OutputSession | RealtimeSession, m: Record<string, unknown>): Promise<void> {
    const f = parseFrame(ResponseCreateFrame, m);
    const raw = f.ok ? said(f.value) : '';
    const fromAudio = raw.trim() === '' && s.kind === 'realtime' && s.engine.realtime && s.inputBytes > 0;
    if (raw.trim() === '' && !fromAudio) return this.stream.error(s, 'response.create missing text');
    if (raw.length > MAX_TTS_CHARS) return this.stream.error(s, `text exceeds ${MAX_TTS_CHARS} characters`, { code: 'voice.text_too_long' });
    const text = sanitizeForSpeech(raw);
    if (text === '' && !fromAudio) return this.stream.error(s, 'text is empty after removing markup');
    s.responded = true;
    s.busy = true;
    s.chars += text.length;
    const started = performance.now();
    let firstAudioMs: number | null = null;
    this.stream.send(s, {
      type: 'voice.response.started',
      provider: s.provider,
      model: s.model,
      voice: s.voice,
      render_mode: s.kind === 'output' ? 'verbatim' : 'conversation',
      text_chars: text.length,
      ...(s.kind === 'output' ? { output_mode: 'streaming_tts_renderer' } : { input_audio_bytes: s.inputBytes }),
    });
    let transcript: (() => string | null) | null = null;
    try {
      const upstream = s.kind === 'realtime' && s.engine.realtime ? this.upstreamOf(s) : null;
      if (upstream) {
        const rt = upstream.respond(text === '' ? null : text);
        transcript = rt.transcript;
        s.stream = rt;
      } else s.stream = await s.engine.speak(text, s.voice, s.model, s.language);
      firstAudioMs = await this.stream.pump(s, 'voice.audio.delta', started);
      s.stream = null;
      if (s.ended) return;
      const spoken = transcript?.();
      if (spoken) this.stream.send(s, { type: 'voice.transcript.final', text: spoken });
      this.stream.send(s, { type: 'voice.audio.done' });
      this.stream.send(s, {
        type: 'voice.response.done',
        provider: s.provider,
        model: s.model,
        voice: s.voice,
        ...(s.kind === 'output' ? { output_mode: 'streaming_tts_renderer' } : {}),
        metrics: metricsOf(s, firstAudioMs, started),
      });
    } catch (err) {
      s.stream?.stop();
      s.stream = null;
      const message =
        err instanceof VoiceProviderError || err instanceof DomainError ? err.message : `voice output provider failed: ${(err as Error).message}`;
      this.stream.error(s, message, { provider: s.provider, code: codeOf(err, 'voice.provider_failed') });
    }
    s.busy = false;
    this.stream.touch(s);
  }

  private nativeOf(s: AgentSession): NativeAgentLink | null {
    if (s.native) return s.native;
    try {
      s.native = new NativeAgentLink(this.config.voice, s, this.wire, this.now, {
        send: (e) => this.stream.send(s, e),
        error: (msg, extra) => this.stream.error(s, msg, extra),
        audio: (pcm, type) => this.stream.audio(s, pcm, type),
        ask: (text, signal, run) => this.agent.ask(s, text, signal, run),
      });
      return s.native;
    } catch (err) {
      this.stream.error(s, (err as Error).message, { code: codeOf(err, 'voice.provider_error') });
      return null;
    }
  }

  /** The realtime session's provider socket, opened on first use (null, with a voice.error sent, when it cannot be). */
  private upstreamOf(s: RealtimeSession): RealtimeUpstream | null {
    if (s.upstream) return s.upstream;
    try {
      s.upstream = new RealtimeUpstream(this.config.voice, s.voice, s.model, (frame) => this.stream.send(s, frame));
      return s.upstream;
    } catch (err) {
      this.stream.error(s, (err as Error).message, { code: codeOf(err, 'voice.provider_error') });
      return null;
    }
  }
}
