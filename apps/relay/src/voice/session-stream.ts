import type { WebSocket } from 'ws';
import { Clock } from '../common/loop/clock';
import { mayQueue } from '../common/sockets/socket-guard';
import { pcmLevels } from './pcm-stream';
import type { VoiceSession } from './voice-session';

/** Audio goes out in frames of about 100 ms. */
const FRAME_MS = 100;
/** Back-pressure: past this much unsent on the socket the provider is paused, and resumed below LOW. */
const HIGH_WATER = 512 * 1024;
const LOW_WATER = 128 * 1024;
/** A socket with nothing to do (no response asked, or the response done) closes after this. */
const IDLE_MS = 60_000;
/** Frames that describe one socket, not the session's stream: never held for a replay. */
const CONNECTION_FRAMES = new Set([
  'voice.session.ready',
  'voice.session.resumed',
  'voice.session.resume_failed',
  'voice.replay.started',
  'voice.replay.done',
]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What a voice session says on its socket: every frame numbered (`event_id`, `at_ms`) and held for a
 * replay (bounded), sent when a socket is there; speech cut into ~100 ms audio frames, read from the
 * provider no faster than the client takes them; the idle close.
 */
export class SessionStream {
  constructor(
    private readonly clock: Clock,
    /** A frame went into the buffer of a session held for a resume (held sessions are bounded together). */
    private readonly onHeldFrame: (s: VoiceSession) => void = () => undefined,
  ) {}

  /** Every frame of the session's stream: numbered, held for a replay (bounded), and sent when a socket is there. */
  send(s: VoiceSession, event: Record<string, unknown>): void {
    if (s.ended) return;
    s.eventSeq++;
    const json = JSON.stringify({ ...event, event_id: s.eventSeq, at_ms: Math.round(this.clock.now().getTime() - s.createdAt) });
    if (!CONNECTION_FRAMES.has(event.type as string)) {
      s.replay.push(s.eventSeq, typeof event.audio_event_id === 'number' ? event.audio_event_id : null, json);
      if (s.graceUntil !== null) this.onHeldFrame(s);
    }
    const ws = s.ws;
    // Held for a replay whatever happens: a socket closed here as a slow consumer is a drop the client resumes.
    if (ws && ws.readyState === ws.OPEN && mayQueue(ws)) ws.send(json);
  }

  error(s: VoiceSession, message: string, extra: Record<string, unknown> = {}): void {
    this.send(s, { type: 'voice.error', message, ...extra });
  }

  /** A frame to one socket outside the session's stream (no event id, not held). */
  static direct(ws: WebSocket, frame: Record<string, unknown>): void {
    if (ws.readyState === ws.OPEN && mayQueue(ws)) ws.send(JSON.stringify(frame));
  }

  /** The idle close restarts: the socket closes (1000 `idle`, ending the session) after IDLE_MS of nothing. */
  touch(s: VoiceSession): void {
    if (s.idle) clearTimeout(s.idle);
    s.idle = setTimeout(() => {
      if (!s.ws) return;
      s.finalClose = 'idle';
      s.ws.close(1000, 'idle');
    }, IDLE_MS);
    s.idle.unref();
  }

  /** Reads the session's current speech into ~100 ms frames of `type`; returns when the first frame went out (ms since `started`). */
  async pump(s: VoiceSession, type: string, started: number): Promise<number | null> {
    let first: number | null = null;
    const stream = s.stream!;
    const frameBytes = Math.round((stream.sampleRate * 2 * FRAME_MS) / 1000);
    let pending: Buffer = Buffer.alloc(0);
    for await (const chunk of stream.chunks) {
      if (s.ended) break;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= frameBytes && !s.ended) {
        await this.audio(s, pending.subarray(0, frameBytes), type);
        first ??= performance.now() - started;
        pending = pending.subarray(frameBytes);
      }
    }
    if (pending.length >= 2 && !s.ended) await this.audio(s, pending.subarray(0, pending.length - (pending.length % 2)), type);
    return first;
  }

  /** One audio frame, then the wait its consumer asks for (drain). */
  async audio(s: VoiceSession, pcm: Buffer, type = 'voice.audio.delta'): Promise<void> {
    if (s.ended) return;
    const lv = pcmLevels(pcm);
    s.audioSeq++;
    s.chunks++;
    s.bytes += pcm.length;
    this.send(s, {
      type,
      audio_event_id: s.audioSeq,
      audio_base64: pcm.toString('base64'),
      byte_count: pcm.length,
      sample_rate: s.stream?.sampleRate ?? s.sampleRate,
      channels: 1,
      sample_width: 2,
      label: null,
      peak_level: lv.peak,
      rms_level: lv.rms,
    });
    await this.drain(s);
  }

  /**
   * Back-pressure: while the socket holds more than HIGH_WATER unsent, while a client that acks has not
   * acked half the replay buffer, or (no open socket: waiting for a resume) while the replay buffer is half
   * full, the caller waits and so the provider's stream is not read. A session that ends stops the wait;
   * a held one ends at the grace, a silent one at the idle close, so the wait is bounded.
   */
  private async drain(s: VoiceSession): Promise<void> {
    for (;;) {
      if (s.ended) return;
      const ws = s.ws;
      // A socket closing (the peer's drop seen, its close event not yet) takes no frames: wait as for none.
      if (ws && ws.readyState === ws.OPEN) {
        // A client that acks is never further behind than half the buffer: a drop then loses nothing it lacks.
        if (s.acking && s.replay.full) {
          await sleep(10);
          continue;
        }
        // Past half the buffer with no ack yet: the client's first ack may be on its way. One turn of the event
        // loop per frame lets it in, so an acking client is bounded above before a drop can leave it a gap.
        if (!s.acking && s.replay.full) await new Promise((r) => setImmediate(r));
        if (ws.bufferedAmount <= HIGH_WATER) return;
        while (!s.ended && s.ws === ws && ws.readyState === ws.OPEN && ws.bufferedAmount > LOW_WATER) await sleep(10);
        return;
      }
      if (!s.replay.full) return;
      await sleep(20);
    }
  }
}
