import { resumeVoiceSession } from '@svc/domain';
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { parseJsonObject } from '../common/sockets/json-object';
import { parseFrame } from '../common/sockets/parse-frame';
import { Secrets } from '../common/auth/secrets';
import { CLOSE } from '../phone-socket/envelope';
import { replayedJson } from './replay-buffer';
import type { Kind } from './session-kinds';
import { SessionStream } from './session-stream';
import { ResumeFrame } from './voice-frames.dto';
import type { VoiceSession } from './voice-session';

/**
 * Voice session resume (the app's `session.resume`, RelayVoiceClient.kt 942-960 and 1742-1745): why a
 * claim fails, the close codes, which follow the reference relay's, the claim itself and the sessions
 * that ended lately.
 */
export const RESUME_CLOSE = {
  /** The new socket took the session over; the old one is closed with this. */
  superseded: 4000,
  invalidToken: 4003,
  /** The session ended, its grace passed, or the frames the client lacks are no longer held. */
  gone: 4008,
  /** A second socket that did not present the resume token first (or within CLAIM_MS). */
  notClaimed: 4009,
  badResume: 4400,
} as const;

/** A second socket must send `session.resume` within this. */
export const CLAIM_MS = 10_000;

export type ResumeFailure =
  | 'invalid_resume'
  | 'invalid_resume_token'
  | 'invalid_cursor'
  | 'replay_gap'
  | 'resume_expired'
  | 'session_closed'
  | 'session_not_claimed'
  | 'session_revoked';

/**
 * What a late resume of a session that ended is told, as the app reads it (`reason`, `message`: a
 * resume_failed frame ends its retries at once, RelayVoiceClient.kt 1906-1918), and the close. A session the
 * held-sessions bound ended is, for the app, one whose hold ran out; the message says which bound.
 */
export function endedRefusal(ended: string, graceSeconds: number): { reason: ResumeFailure; message: string; close: number; closeReason: string } {
  const gone = { close: RESUME_CLOSE.gone, closeReason: 'resume expired' };
  if (ended === 'resume_expired')
    return {
      reason: 'resume_expired',
      message: `this voice session has ended: it was not resumed within ${graceSeconds} s of its drop (RELAY_VOICE_RESUME_GRACE_SECONDS); create a new one`,
      ...gone,
    };
  if (ended === 'resume_evicted')
    return {
      reason: 'resume_expired',
      message:
        'this voice session has ended: the sessions held for a resume were past their memory bound (RELAY_VOICE_HELD_MAX_BYTES) and it had been held longest; create a new one',
      ...gone,
    };
  return {
    reason: 'session_closed',
    message: `this voice session has ended (${ended}); create a new one`,
    close: RESUME_CLOSE.gone,
    closeReason: 'session closed',
  };
}

type Tombstone = { actor: string; kind: Kind; reason: string; until: number };

/**
 * Sessions that ended after they had a socket, kept a few minutes so that a late resume by their own
 * caller is told why (`voice.session.resume_failed`) instead of getting a bare 404. Bounded in number.
 */
export class Tombstones {
  private readonly ended = new Map<string, Tombstone>();

  constructor(
    private readonly max = 1024,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  add(id: string, t: Omit<Tombstone, 'until'>, now: number): void {
    this.ended.delete(id);
    this.ended.set(id, { ...t, until: now + this.ttlMs });
    while (this.ended.size > this.max) this.ended.delete(this.ended.keys().next().value!);
  }

  get(id: string, now: number): Tombstone | null {
    const t = this.ended.get(id);
    if (!t) return null;
    if (t.until <= now) {
      this.ended.delete(id);
      return null;
    }
    return t;
  }
}

/** What a resume needs of the sessions (VoiceSessions). */
export type ResumeHost = {
  /** `ws` becomes the session's socket. */
  bind(s: VoiceSession, ws: WebSocket): void;
  /** The session's caller may still use it. */
  allowed(s: VoiceSession): boolean;
  /** Ends a session whose caller lost the right to it. */
  cut(s: VoiceSession, reason: string): void;
  end(s: VoiceSession, reason: string): Promise<void>;
};

/**
 * A socket taking a session over: a later socket of the same caller owns nothing until it presents the
 * resume token, and gets what it missed before the live stream.
 */
export class SessionResume {
  constructor(
    private readonly loop: CommandLoop,
    private readonly secrets: Secrets,
    private readonly clock: Clock,
    private readonly stream: SessionStream,
    private readonly logger: Logger,
    private readonly graceSeconds: number,
    private readonly host: ResumeHost,
  ) {}

  /**
   * A later socket of the same caller (after a drop, or beside a socket the relay still thinks open): it
   * owns nothing until its first frame presents the resume token (`session.resume`) within CLAIM_MS.
   */
  candidate(s: VoiceSession, ws: WebSocket): void {
    ws.on('error', (err) => this.logger.debug({ err: err.message }, 'voice socket error'));
    if (s.ended) return this.refuse(s, ws, 'session_closed', 'this voice session has ended; create a new one', RESUME_CLOSE.gone);
    if (s.candidate) this.refuse(s, s.candidate, 'session_not_claimed', 'another socket is resuming this session', RESUME_CLOSE.notClaimed);
    s.candidate = ws;
    if (s.claimTimer) clearTimeout(s.claimTimer);
    s.claimTimer = setTimeout(() => {
      if (s.candidate === ws) this.refuse(s, ws, 'session_not_claimed', `send session.resume within ${CLAIM_MS / 1000} s`, RESUME_CLOSE.notClaimed);
    }, CLAIM_MS);
    s.claimTimer.unref();
    let first = true;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (!first) return;
      first = false;
      const m = isBinary ? null : parseJsonObject(String(data));
      const claims = m !== null && (m.type === 'session.resume' || (m.type === 'session.start' && typeof m.resume_token === 'string'));
      if (!claims)
        return this.refuse(
          s,
          ws,
          'session_not_claimed',
          'this session already had a socket: the first frame must be session.resume',
          RESUME_CLOSE.notClaimed,
        );
      this.claim(s, ws, m);
    });
    ws.on('close', () => {
      if (s.candidate !== ws) return;
      s.candidate = null;
      if (s.claimTimer) clearTimeout(s.claimTimer);
      s.claimTimer = null;
    });
  }

  /**
   * `session.resume {resume_token, last_event_id, last_audio_event_id, ...}`: the token's digest must match,
   * the caller must still hold the grant, and every frame after `last_event_id` must still be held. Then
   * the socket takes the session over: `voice.session.resumed`, `voice.replay.started`, the missed frames
   * (`replayed: true`), `voice.replay.done`, then the live stream (a response still running goes on here).
   */
  claim(s: VoiceSession, ws: WebSocket, m: Record<string, unknown>): void {
    const parsed = parseFrame(ResumeFrame, m);
    if (!parsed.ok) return this.refuse(s, ws, 'invalid_resume', parsed.error.message, RESUME_CLOSE.badResume);
    const c = parsed.value;
    if (!Secrets.same(this.secrets.digest(c.resume_token), s.resumeDigest))
      return this.refuse(s, ws, 'invalid_resume_token', 'the resume token is not this session’s', RESUME_CLOSE.invalidToken);
    if (s.ended) return this.refuse(s, ws, 'session_closed', 'this voice session has ended; create a new one', RESUME_CLOSE.gone);
    if (!this.host.allowed(s)) {
      this.refuse(s, ws, 'session_revoked', 'the relay session was revoked, expired or lost the voice grant', CLOSE.revoked);
      return this.host.cut(s, 'session expired, revoked or without the voice grant');
    }
    if (s.graceUntil !== null && this.clock.now().getTime() >= s.graceUntil) {
      this.refuse(s, ws, 'resume_expired', `the resume grace (${this.graceSeconds} s) has passed`, RESUME_CLOSE.gone);
      return void this.host.end(s, 'resume_expired');
    }
    if (c.last_event_id > s.eventSeq || c.last_audio_event_id > s.audioSeq)
      return this.refuse(s, ws, 'invalid_cursor', `last_event_id is past this session's last event (${s.eventSeq})`, RESUME_CLOSE.badResume);
    const from = s.replay.since(c.last_event_id, Math.max(c.last_audio_event_id, c.last_played_audio_event_id));
    if (!from.ok) {
      this.refuse(
        s,
        ws,
        'replay_gap',
        `the frames after event ${from.missingAfter} are no longer held (a session holds at most ${s.replay.maxFrames} frames and ${s.replay.maxBytes} bytes for a resume); create a new session`,
        RESUME_CLOSE.gone,
      );
      return void this.host.end(s, 'resume_failed');
    }
    // The claim holds: this socket is the session's now.
    if (s.candidate === ws) {
      s.candidate = null;
      if (s.claimTimer) clearTimeout(s.claimTimer);
      s.claimTimer = null;
    }
    const previous = s.ws;
    const wasDetached = s.graceUntil !== null;
    s.graceUntil = null;
    if (previous !== ws) {
      this.host.bind(s, ws);
      // The relay still thought the old socket open (the client moved networks): it is closed, its close ignored.
      if (previous) previous.close(RESUME_CLOSE.superseded, 'superseded by a resumed socket');
    }
    if (wasDetached)
      void this.loop
        .run(s.actor, (models) => resumeVoiceSession(models, s.id, c.last_event_id, from.frames.length))
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'voice session resume not recorded'));
    const maxInputChunkId = s.kind === 'output' ? -1 : s.maxInputChunkId;
    this.stream.send(s, {
      type: 'voice.session.resumed',
      session_id: s.id,
      resume_supported: true,
      last_event_id: c.last_event_id,
      last_audio_event_id: c.last_audio_event_id,
      last_played_audio_event_id: c.last_played_audio_event_id,
      last_input_chunk_id: Math.max(c.last_input_chunk_id, maxInputChunkId, 0),
      replay_event_count: from.frames.length,
    });
    this.stream.send(s, {
      type: 'voice.replay.started',
      session_id: s.id,
      from_event_id: c.last_event_id,
      from_audio_event_id: c.last_audio_event_id,
      replay_event_count: from.frames.length,
    });
    for (const f of from.frames) ws.send(replayedJson(f));
    this.stream.send(s, { type: 'voice.replay.done', session_id: s.id, replay_event_count: from.frames.length });
    this.stream.touch(s);
  }

  /** A failed resume, said on that socket only (never held for a replay), and the socket closed. */
  refuse(s: VoiceSession, ws: WebSocket, reason: ResumeFailure, message: string, code: number): void {
    if (s.candidate === ws) {
      s.candidate = null;
      if (s.claimTimer) clearTimeout(s.claimTimer);
      s.claimTimer = null;
    }
    SessionStream.direct(ws, { type: 'voice.session.resume_failed', session_id: s.id, reason, message });
    if (s.ws === ws) s.finalClose = 'resume_failed';
    ws.close(code, reason);
  }
}
