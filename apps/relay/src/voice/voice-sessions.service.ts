import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { actorOf, detachVoiceSession, expireVoiceSessions, hasGrant, isLive, type Principal } from '@svc/domain';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { merge, type Subscription } from 'rxjs';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { apiVoiceOf, authenticateVoice, type AuthDeps } from '../common/http/auth-hook';
import { Clock } from '../common/loop/clock';
import type { RelayConfig } from '../common/config/relay-config';
import { CommandLoop } from '../common/loop/command-loop';
import { toErrorResponse } from '../common/http/http-errors';
import { Scheduler } from '../common/loop/scheduler';
import { Secrets } from '../common/auth/secrets';
import { guardOf, rawSize, SocketGuards } from '../common/sockets/socket-guard';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/auth/tokens';
import { CLOSE } from '../phone-socket/envelope';
import { RealtimeAgentBroker } from './realtime-agent';
import { SessionFrames } from './session-frames';
import { KINDS, kindOfSegment, type Kind } from './session-kinds';
import { SessionStream } from './session-stream';
import { VoiceSessionCreation } from './session-creation.service';
import { VoiceConfigFiles } from './voice-config';
import type { AgentSessionDto, VoiceSessionDto } from './voice.dto';
import { VoiceProviders } from './voice-providers';
import { endedRefusal, RESUME_CLOSE, SessionResume, Tombstones } from './voice-resume';
import { stopWork, type VoiceSession } from './voice-session';
import { VoiceWire } from './voice-wire';
import { HeldSessions, type HeldSummary } from './held-sessions';

const PATH_RE = /^\/voice\/([a-z-]+)\/([A-Za-z0-9_-]{1,64})$/;

/**
 * Close codes that mean the connection was lost, not closed: 1006 (no close frame: the phone changed
 * networks), 1001 (an intermediary going away), 1012-1014 (a proxy restarting or failing). Only these
 * hold the session for a resume.
 */
const DROP_CODES = new Set([1001, 1006, 1012, 1013, 1014]);

/**
 * The voice sessions of spec 4.5 and their sockets. `POST /voice/{output,realtime,realtime-agent}/session`
 * creates one (an event) with a resume token; the client opens `websocket_path` with the same credential
 * within 60 s. Output: `response.create {text}` streams `voice.audio.delta` frames (base64 16-bit PCM,
 * ~100 ms each) as the provider produces them, then `voice.audio.done` and `voice.response.done`, once.
 * Realtime (experimental): the same, in turn, rendered offline or through the provider's realtime socket,
 * with input audio acknowledged. Realtime agent (experimental): turns go through RealtimeAgentBroker.
 * Every frame carries an increasing `event_id` and is held in a bounded replay buffer: a socket that drops
 * (anything but a normal close) leaves the session running for the resume grace, and a new socket of the
 * same caller that presents the token (`session.resume`) gets what it missed, then the live stream. The
 * frames are session-frames.ts's, the stream session-stream.ts's, the resume voice-resume.ts's.
 */
@Injectable()
export class VoiceSessions implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly live = new Map<string, VoiceSession>();
  private readonly ended = new Tombstones();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 });
  private readonly auth: AuthDeps;
  private readonly stream: SessionStream;
  private readonly frames: SessionFrames;
  private readonly resume: SessionResume;
  private readonly lost: Subscription;
  /** Every voice socket's bounds and keepalive (common/sockets/socket-guard.ts), as the phone socket's. */
  private readonly guards: SocketGuards;
  /** The sessions held for a resume, bounded together (held-sessions.ts). */
  private readonly held: HeldSessions;
  private stopping = false;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly creation: VoiceSessionCreation,
    providers: VoiceProviders,
    wire: VoiceWire,
    secrets: Secrets,
    files: VoiceConfigFiles,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.auth = { loop, secrets, clock, logger, port: () => runtime.port, apiVoice: apiVoiceOf(config) };
    this.guards = new SocketGuards({ ...config.sockets, pingIntervalMs: config.pingIntervalMs }, logger, 'voice');
    const now = () => this.clock.now().getTime();
    this.held = new HeldSessions(config.voice.heldMaxBytes);
    this.stream = new SessionStream(clock, () => this.evictHeld());
    const agent = new RealtimeAgentBroker(config, providers, files, wire, this.stream, now, (s) => !s.ended && this.allowed(s));
    this.frames = new SessionFrames(config, wire, this.stream, agent, now, {
      allowed: (s) => this.allowed(s),
      cut: (s, reason) => this.cut(s, reason),
      claim: (s, ws, m) => this.resume.claim(s, ws, m),
    });
    this.resume = new SessionResume(loop, secrets, clock, this.stream, logger, config.voice.resumeGraceSeconds, {
      bind: (s, ws) => this.bind(s, ws),
      allowed: (s) => this.allowed(s),
      cut: (s, reason) => this.cut(s, reason),
      end: (s, reason) => this.end(s, reason),
    });
    // A relay session revoked, expired or stripped of the grant takes its voice sessions with it (4403), as the
    // phone socket is closed: a revoked phone must not go on driving the agent API with the relay's key. A
    // session waiting for a resume ends too.
    this.lost = merge(
      this.loop.bus.ofType('session.revoked', 'session.expired'),
      this.loop.bus.ofType('session.grant_expired', 'session.shortened'),
    ).subscribe((e) => {
      const reason = e.type === 'session.revoked' ? 'session revoked' : e.type === 'session.expired' ? 'session expired' : 'voice grant removed';
      for (const s of [...this.live.values()]) if (s.tokenPrefix === e.data.tokenPrefix && !this.allowed(s)) this.cut(s, reason);
    });
    scheduler.register('voice.expire', (m, at) => expireVoiceSessions(m, at, this.attached(), (id) => this.totals(id)));
    // A run in flight says so every few seconds (clock time: a manual clock's advance ticks it in tests).
    scheduler.onTick(() => {
      for (const s of this.live.values()) if (s.kind === 'realtime_agent') s.run?.heartbeat();
    });
    // Ended by the sweep (never opened, or not resumed within the grace): its work stops.
    this.loop.bus.ofType('voice.session_ended').subscribe((e) => {
      const s = this.live.get(e.data.sessionId);
      if (s && !s.ended) this.teardown(s, e.data.reason);
    });
  }

  /**
   * Whether the session's caller may still use it at the clock's now: the API bearer always (it is tied to no
   * relay session); a phone while its relay session is live and holds the kind's grant.
   */
  private allowed(s: VoiceSession): boolean {
    if (s.tokenPrefix === null) return true;
    const session = this.loop.models.sessions.byTokenPrefix(s.tokenPrefix);
    const now = this.clock.now();
    return session !== undefined && isLive(session, now) && hasGrant(session, KINDS[s.kind].grant, now);
  }

  /** Ends a session whose caller lost the right to it: work in flight stops, the socket closes 4403 with why. */
  private cut(s: VoiceSession, reason: string): void {
    stopWork(s);
    if (s.candidate) this.resume.refuse(s, s.candidate, 'session_revoked', `${reason}: this voice session is closed`, CLOSE.revoked);
    if (!s.ws) return void this.end(s, 'revoked');
    s.finalClose = 'revoked';
    this.stream.error(s, `${reason}: this voice session is closed`, { code: 'voice.session_revoked' });
    s.ws.close(CLOSE.revoked, reason);
  }

  /** Sessions with a socket open now (the operator's console: attaching is not an event). */
  connected(): ReadonlySet<string> {
    return new Set([...this.live.values()].filter((s) => s.ws !== null).map((s) => s.id));
  }

  /** What the sessions held for a resume hold (the console): each one's bytes, and all of them against the bound. */
  heldBytesOf(id: string): number | null {
    return this.held.bytesOf(id);
  }

  heldSummary(): HeldSummary {
    return this.held.summary();
  }

  /** Past the bound on what held sessions hold together, the one held longest ends (a late resume is told why). */
  private evictHeld(): void {
    for (const s of this.held.overflow()) void this.end(s, 'resume_evicted');
  }

  /** Sessions the expiry sweep must leave: with a socket, or whose drop is being recorded. */
  private attached(): Set<string> {
    return new Set([...this.live.values()].filter((s) => s.ws !== null || s.detaching).map((s) => s.id));
  }

  private totals(id: string): { chunks: number; bytes: number; chars: number } {
    const s = this.live.get(id);
    return s ? { chunks: s.chunks, bytes: s.bytes, chars: s.chars } : { chunks: 0, bytes: 0, chars: 0 };
  }

  /** POST /voice/{output,realtime,realtime-agent}/session: the session is created (session-creation.service.ts), then held here. */
  async create(kind: Kind, body: VoiceSessionDto | AgentSessionDto, principal: Principal) {
    const { session, answer } = await this.creation.create(kind, body, principal);
    this.live.set(session.id, session);
    return answer;
  }

  /** The HTTP server's upgrade for `/voice/...`: true when it was this module's to answer. */
  handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const pathname = new URL(req.url ?? '/', 'http://relay').pathname;
    if (!pathname.startsWith('/voice/')) return false;
    void this.upgrade(pathname, req, socket, head);
    return true;
  };

  private async upgrade(pathname: string, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const m = PATH_RE.exec(pathname);
    const kind = m ? kindOfSegment(m[1]) : undefined;
    if (!m || !kind) return refuseUpgrade(socket, 404, 'not_found', 'no such voice socket');
    let principal: Principal;
    try {
      principal = await authenticateVoice(this.auth, req, KINDS[kind].grant);
    } catch (err) {
      const r = toErrorResponse(err);
      return refuseUpgrade(socket, r.status, r.body.code, r.body.error);
    }
    const now = this.clock.now().getTime();
    const s = this.live.get(m[2]);
    if (!s) {
      // Ended after it had a socket: its own caller's late resume is told why, on the socket, as the app reads it.
      const t = this.ended.get(m[2], now);
      if (t && t.kind === kind && t.actor === actorOf(principal))
        return void this.wss.handleUpgrade(req, socket, head, (ws) => {
          ws.on('error', () => undefined);
          const r = endedRefusal(t.reason, this.config.voice.resumeGraceSeconds);
          SessionStream.direct(ws, { type: 'voice.session.resume_failed', session_id: m[2], reason: r.reason, message: r.message });
          ws.close(r.close, r.closeReason);
        });
      return refuseUpgrade(socket, 404, 'voice.unknown_session', `no such ${kind} voice session`);
    }
    const known = this.loop.models.voice.session(m[2]);
    if (!known || s.kind !== kind) return refuseUpgrade(socket, 404, 'voice.unknown_session', `no such ${kind} voice session`);
    if (s.ended || (!s.everAttached && known.expiresAt <= now))
      return refuseUpgrade(socket, 410, 'voice.session_ended', 'this voice session has ended (its socket must open within 60 s of creation)');
    if (actorOf(principal) !== s.actor) return refuseUpgrade(socket, 403, 'voice.session_not_yours', 'this voice session belongs to another caller');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.guards.watch(ws, { describe: () => ({ session: s.id }) });
      if (s.everAttached || s.ended) this.resume.candidate(s, ws);
      else this.attach(s, ws);
    });
  }

  /** The session's first socket: it gets `voice.session.ready` at once. */
  private attach(s: VoiceSession, ws: WebSocket): void {
    s.everAttached = true;
    this.bind(s, ws);
    // Revoked while the upgrade was being authenticated: the bus event found no socket to close.
    if (!this.allowed(s)) return this.cut(s, 'session expired, revoked or without the voice grant');
    this.stream.touch(s);
    this.stream.send(s, this.frames.ready(s));
  }

  /** `ws` becomes the session's socket: its frames are the session's, its close a drop or the end. */
  private bind(s: VoiceSession, ws: WebSocket): void {
    s.ws = ws;
    this.held.release(s);
    const guard = guardOf(ws) ?? this.guards.watch(ws);
    ws.on('message', (data: RawData, isBinary: boolean) =>
      guard.run(rawSize(data), () => {
        if (s.ws === ws) this.frames.onFrame(s, data, isBinary);
      }),
    );
    ws.on('error', (err) => this.logger.debug({ err: err.message }, 'voice socket error'));
    // A socket the guard closed (slow consumer, no pong) is a connection lost, recorded with the code it was sent.
    ws.on('close', (code: number) => this.onClosed(s, ws, guard.cut?.code ?? code, guard.cut !== null));
  }

  /**
   * The session's socket closed. A connection lost (DROP_CODES, or `lost`: cut by the socket guard) holds the
   * session for the resume grace, its work going on; a close the client chose (1000, 1005 with no code, 1011
   * after an error, ...), one the relay made on purpose, or a shutdown ends it.
   */
  private onClosed(s: VoiceSession, ws: WebSocket, code: number, lost: boolean): void {
    if (s.ws !== ws) return;
    s.ws = null;
    if (s.idle) clearTimeout(s.idle);
    s.idle = null;
    if (s.ended) return;
    if (s.finalClose !== null || !(lost || DROP_CODES.has(code)) || this.stopping)
      return void this.end(s, s.finalClose === 'revoked' ? 'revoked' : s.responded ? 'closed' : 'closed_before_response');
    const until = this.clock.now().getTime() + this.config.voice.resumeGraceSeconds * 1000;
    s.graceUntil = until;
    s.detaching = true;
    this.held.hold(s);
    this.loop
      .run(s.actor, (models) => detachVoiceSession(models, s.id, code, new Date(until)))
      .then(
        () => (s.detaching = false),
        (err: Error) => {
          // Not recorded (the disk guard, say): nothing may outlive its record, so the session ends now.
          s.detaching = false;
          this.logger.warn({ err: err.message }, 'voice session drop not recorded; ending it');
          void this.end(s, 'closed');
        },
      );
    // After the drop is on its way to the log, so an eviction's end is written after it.
    this.evictHeld();
  }

  /** The session's work stops and its memory goes; a late resume by its caller is told why (Tombstones). */
  private teardown(s: VoiceSession, reason: string): void {
    s.ended = true;
    stopWork(s);
    if (s.kind === 'realtime_agent') {
      if (s.run && !s.run.ended) s.run.ended = true;
      s.inputPcm = [];
    }
    if (s.idle) clearTimeout(s.idle);
    if (s.claimTimer) clearTimeout(s.claimTimer);
    s.candidate?.close(RESUME_CLOSE.gone, 'session closed');
    s.candidate = null;
    this.held.release(s);
    s.replay.clear();
    this.live.delete(s.id);
    if (s.everAttached) this.ended.add(s.id, { actor: s.actor, kind: s.kind, reason }, this.clock.now().getTime());
    if (s.ws && s.ws.readyState === s.ws.OPEN) {
      s.finalClose ??= reason;
      s.ws.close(RESUME_CLOSE.gone, 'session closed');
    }
  }

  private async end(s: VoiceSession, reason: string): Promise<void> {
    if (s.ended) return;
    const totals = { chunks: s.chunks, bytes: s.bytes, chars: s.chars };
    this.teardown(s, reason);
    await this.loop
      .run(s.actor, () => [{ type: 'voice.session_ended', data: { sessionId: s.id, kind: s.kind, reason, ...totals } }])
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'voice session end not recorded'));
  }

  /** Before the server closes (it would wait for them): every voice socket is closed (1001), then cut if it does not answer. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    const open = [...this.live.values()].filter((s) => s.ws);
    for (const s of [...this.live.values()]) {
      s.stream?.stop();
      s.candidate?.terminate();
      // Held for a resume that cannot come now: its work stops (sessions are reset at the next start).
      if (!s.ws) this.teardown(s, 'closed');
    }
    await Promise.all(
      open.map(
        (s) =>
          new Promise<void>((resolve) => {
            const ws = s.ws!;
            const cut = setTimeout(() => ws.terminate(), 1000);
            ws.once('close', () => {
              clearTimeout(cut);
              resolve();
            });
            ws.close(1001, 'relay stopping');
          }),
      ),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.lost.unsubscribe();
    this.guards.stop();
    this.wss.close();
  }
}

const REASON_PHRASES: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 410: 'Gone' };

/** An upgrade refused with an HTTP answer in the voice routes' error shape. */
function refuseUpgrade(socket: Duplex, status: number, code: string, error: string): void {
  const body = JSON.stringify({ ok: false, success: false, error, code });
  const reason = REASON_PHRASES[status] ?? 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
