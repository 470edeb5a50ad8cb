import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import {
  actorOf,
  detachVoiceSession,
  DomainError,
  expireVoiceSessions,
  hasGrant,
  isLive,
  MAX_TTS_CHARS,
  resumeVoiceSession,
  VOICE_SESSION_CONNECT_SECONDS,
  type Principal,
} from '@svc/domain';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '@svc/events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { apiVoiceOf, authenticateVoice, type AuthDeps } from '../common/auth-hook';
import { Clock } from '../common/clock';
import type { RelayConfig } from '../common/config';
import { CommandLoop } from '../common/command-loop';
import { Scheduler } from '../common/scheduler';
import { Secrets, secureRandomBytes } from '../common/secrets';
import { toErrorResponse } from '../common/http-errors';
import { parseJsonObject } from '../common/json-object';
import { LOGGER, RELAY_CONFIG, RUNTIME, type Runtime } from '../common/tokens';
import { CLOSE } from '../phone-socket/envelope';
import { merge, type Subscription } from 'rxjs';
import type { AgentRun } from './agent-run';
import { assertOpenSessionsBelow, TokenBuckets } from './creation-limit';
import { metricsOf, offlinePcm, openaiPcm, pcmLevels, type PcmStream } from './pcm-stream';
import { RealtimeUpstream } from './realtime-upstream';
import { NativeAgentLink } from './native-agent';
import { ReplayBuffer, replayedJson } from './replay-buffer';
import { VoiceProviderError } from './voice-provider';
import { sanitizeForSpeech } from './speech-text';
import { CLAIM_MS, parseResume, RESUME_CLOSE, Tombstones, type ResumeFailure } from './voice-resume';
import { VoiceService } from './voice.service';
import { VoiceWire, type Kind } from './voice-wire';
import { resample, writeWav16 } from './wav';
import { agentFields, RealtimeAgentBroker } from './realtime-agent';

export type { Kind } from './voice-wire';

const SECTION = { output: 'voice_output', realtime: 'realtime_voice', realtime_agent: 'realtime_agent' } as const;
const GRANT: Record<Kind, string> = { output: 'voice:tts', realtime: 'voice:realtime', realtime_agent: 'voice:realtime' };
/** URL segment of each kind (`/voice/<segment>/<session_id>`). */
const SEGMENT: Record<Kind, string> = { output: 'output', realtime: 'realtime', realtime_agent: 'realtime-agent' };
const KIND_OF_SEGMENT: Record<string, Kind> = { output: 'output', realtime: 'realtime', 'realtime-agent': 'realtime_agent' };
/** Input audio a realtime session accepts in all (it is counted and acknowledged, not kept). */
const MAX_INPUT_AUDIO_BYTES = 16 * 1024 * 1024;
/** Audio goes out in frames of about 100 ms. */
const FRAME_MS = 100;
/** Back-pressure: past this much unsent on the socket the provider is paused, and resumed below LOW. */
const HIGH_WATER = 512 * 1024;
const LOW_WATER = 128 * 1024;
/** A socket with nothing to do (no response asked, or the response done) closes after this. */
const IDLE_MS = 60_000;
const PATH_RE = /^\/voice\/(output|realtime|realtime-agent)\/([A-Za-z0-9_-]{1,64})$/;
/** Frames that describe one socket, not the session's stream: never held for a replay. */
const CONNECTION_FRAMES = new Set([
  'voice.session.ready',
  'voice.session.resumed',
  'voice.session.resume_failed',
  'voice.replay.started',
  'voice.replay.done',
]);

/**
 * Close codes that mean the connection was lost, not closed: 1006 (no close frame: the phone changed
 * networks), 1001 (an intermediary going away), 1012-1014 (a proxy restarting or failing). Only these
 * hold the session for a resume.
 */
const DROP_CODES = new Set([1001, 1006, 1012, 1013, 1014]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Live = {
  id: string;
  kind: Kind;
  inputBytes: number;
  /** A response is being rendered (from response.create to done or error). */
  busy: boolean;
  /** realtime_agent: the agent chat session the turns continue, the conversation so far, the mic audio not yet committed. */
  chatSessionId: string | null;
  context: Array<{ role: 'user' | 'assistant' | 'system'; content: string }>;
  inputPcm: Buffer[];
  inputRate: number;
  /** The highest mic `chunk_id` taken: a chunk the app sends again after a resume is acknowledged, not used twice. */
  maxInputChunkId: number;
  abort: AbortController | null;
  /** realtime with the openai provider: the session's socket to the provider's realtime API (opened on first use). */
  upstream: RealtimeUpstream | null;
  /** realtime_agent with the openai provider: the provider-native engine (native-agent.ts). */
  native: NativeAgentLink | null;
  /** realtime_agent: the agent run in flight, for its periodic progress. */
  run: AgentRun | null;
  actor: string;
  /** The relay session it belongs to (null: opened with the API bearer, tied to no relay session). */
  tokenPrefix: string | null;
  provider: string;
  model: string;
  voice: string;
  sampleRate: number;
  profile: string | null;
  ws: WebSocket | null;
  /** A socket has been attached once: a later one must resume. */
  everAttached: boolean;
  /** A second socket waiting to present the resume token, and its deadline. */
  candidate: WebSocket | null;
  claimTimer: NodeJS.Timeout | null;
  /** The digest of the resume token (the token itself went to the creator only). */
  resumeDigest: string;
  /** Frames a resuming client may lack (bounded in frames and bytes). */
  replay: ReplayBuffer;
  /** The client acks frames (`client.ack`, as the app does): its stream is paced by its acks. */
  acking: boolean;
  /** The socket dropped: the session waits for a resume until then (clock ms). */
  graceUntil: number | null;
  /** The drop is being recorded (the expiry sweep must not take the session meanwhile). */
  detaching: boolean;
  /** The relay closes the socket on purpose (revoked, idle, session.close, shutdown): the session ends with it. */
  finalClose: string | null;
  responded: boolean;
  stream: PcmStream | null;
  eventSeq: number;
  audioSeq: number;
  chunks: number;
  bytes: number;
  chars: number;
  createdAt: number;
  idle: NodeJS.Timeout | null;
  ended: boolean;
};

/**
 * The voice sessions of spec 4.5 and their sockets. `POST /voice/{output,realtime,realtime-agent}/session`
 * creates one (an event) with a resume token; the client opens `websocket_path` with the same credential
 * within 60 s. Output: `response.create {text}` streams `voice.audio.delta` frames (base64 16-bit PCM,
 * ~100 ms each) as the provider produces them, then `voice.audio.done` and `voice.response.done`, once.
 * Realtime (experimental): the same, in turn, rendered offline or through the provider's realtime socket,
 * with input audio acknowledged. Realtime agent (experimental): turns go through RealtimeAgentBroker.
 * Every frame carries an increasing `event_id` and is held in a bounded replay buffer: a socket that drops
 * (anything but a normal close) leaves the session running for the resume grace, and a new socket of the
 * same caller that presents the token (`session.resume`) gets what it missed, then the live stream.
 */
@Injectable()
export class VoiceSessions implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly live = new Map<string, Live>();
  private readonly ended = new Tombstones();
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 });
  private readonly auth: AuthDeps;
  /** The realtime-agent broker's turns (realtime-agent.ts). */
  private readonly agent: RealtimeAgentBroker;
  /** Creations per caller: output sessions (the app makes one a sentence), and realtime ones. */
  private readonly creations: Record<'output' | 'realtime', TokenBuckets>;
  private readonly lost: Subscription;
  private readonly wire: VoiceWire;
  private stopping = false;

  constructor(
    private readonly log: CommandLoop,
    private readonly clock: Clock,
    private readonly voice: VoiceService,
    private readonly secrets: Secrets,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.auth = {
      log,
      secrets,
      clock,
      logger,
      port: () => runtime.port,
      apiVoice: apiVoiceOf(config),
    };
    this.wire = voice.wire;
    this.agent = new RealtimeAgentBroker(config, voice, this.wire, () => this.clock.now().getTime(), {
      send: (s, e) => this.send(s, e),
      error: (s, m, x) => this.error(s, m, x),
      pump: (s, type, started) => this.pump(s, type, started),
      touch: (s) => this.touch(s),
      allowed: (s) => !s.ended && this.allowed(s),
    });
    const v = config.voice;
    this.creations = {
      output: new TokenBuckets(v.outputSessionsPerMinute, Math.max(1, Math.ceil(v.outputSessionsPerMinute / 2))),
      realtime: new TokenBuckets(v.realtimeSessionsPerMinute, Math.max(1, Math.ceil(v.realtimeSessionsPerMinute / 2))),
    };
    // A relay session revoked, expired or stripped of the grant takes its voice sessions with it (4403), as the
    // phone socket is closed: a revoked phone must not go on driving the agent API with the relay's key. A
    // session waiting for a resume ends too.
    this.lost = merge(
      this.log.bus.ofType('session.revoked', 'session.expired'),
      this.log.bus.ofType('session.grant_expired', 'session.shortened'),
    ).subscribe((e) => {
      const reason = e.type === 'session.revoked' ? 'session revoked' : e.type === 'session.expired' ? 'session expired' : 'voice grant removed';
      for (const s of [...this.live.values()]) if (s.tokenPrefix === e.data.tokenPrefix && !this.allowed(s)) this.cut(s, reason);
    });
    scheduler.register('voice.expire', (m, now) => expireVoiceSessions(m, now, this.attached(), (id) => this.totals(id)));
    // A run in flight says so every few seconds (clock time: a manual clock's advance ticks it in tests).
    scheduler.onTick(() => {
      for (const s of this.live.values()) s.run?.heartbeat();
    });
    // Ended by the sweep (never opened, or not resumed within the grace): its work stops.
    this.log.bus.ofType('voice.session_ended').subscribe((e) => {
      const s = this.live.get(e.data.sessionId);
      if (s && !s.ended) this.teardown(s, e.data.reason);
    });
  }

  /**
   * Whether the session's caller may still use it at the clock's now: the API bearer always (it is tied to no
   * relay session); a phone while its relay session is live and holds the kind's grant.
   */
  private allowed(s: Live): boolean {
    if (s.tokenPrefix === null) return true;
    const session = this.log.models.sessions.byTokenPrefix(s.tokenPrefix);
    const now = this.clock.now();
    return session !== undefined && isLive(session, now) && hasGrant(session, GRANT[s.kind], now);
  }

  /** Ends a session whose caller lost the right to it: work in flight stops, the socket closes 4403 with why. */
  private cut(s: Live, reason: string): void {
    s.abort?.abort();
    s.stream?.stop();
    s.upstream?.close();
    s.native?.close();
    if (s.candidate) this.refuseResume(s, s.candidate, 'session_revoked', `${reason}: this voice session is closed`, CLOSE.revoked);
    if (!s.ws) return void this.end(s, 'revoked');
    s.finalClose = 'revoked';
    this.error(s, `${reason}: this voice session is closed`, { code: 'voice.session_revoked' });
    s.ws.close(CLOSE.revoked, reason);
  }

  /** Sessions the expiry sweep must leave: with a socket, or whose drop is being recorded. */
  private attached(): Set<string> {
    return new Set([...this.live.values()].filter((s) => s.ws !== null || s.detaching).map((s) => s.id));
  }

  private totals(id: string): { chunks: number; bytes: number; chars: number } {
    const s = this.live.get(id);
    return s ? { chunks: s.chunks, bytes: s.bytes, chars: s.chars } : { chunks: 0, bytes: 0, chars: 0 };
  }

  /**
   * POST /voice/output/session and /voice/realtime/session (realtime is experimental: off until enabled).
   * Bounded per caller (a relay session, or the API bearer): a creation rate (429 with Retry-After) and a
   * number of sessions open at once.
   */
  async create(kind: Kind, body: unknown, principal: Principal) {
    const actor = actorOf(principal);
    const wait = this.creations[kind === 'output' ? 'output' : 'realtime'].take(actor, this.clock.now().getTime());
    if (wait > 0)
      throw new DomainError('rate_limited', 'rate_limited', `too many ${kind.replace('_', '-')} voice sessions created; retry in ${wait} s`, {
        success: false,
        retry_after: wait,
      });
    const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
    const settings = this.voice.settings(SECTION[kind], b.profile);
    if (!this.voice.enabledIn(SECTION[kind], settings))
      throw new DomainError(
        `voice.${kind}_disabled`,
        'not_found',
        kind === 'output'
          ? 'voice output is disabled (voice_output.enabled: false)'
          : `${kind === 'realtime' ? 'realtime voice' : 'the realtime agent'} is disabled (experimental: the operator turns it on with PATCH /voice/${SEGMENT[kind]}/config {"enabled": true} from the relay's host, or RELAY_REALTIME_VOICE_ENABLED=1; a profile's config may enable it for that profile)`,
        { success: false },
      );
    const provider = this.voice.providerId(typeof b.provider === 'string' ? b.provider : settings.provider);
    if (provider === null)
      throw new DomainError('voice.unknown_provider', 'invalid', `no voice provider "${String(b.provider ?? settings.provider).slice(0, 40)}"`, {
        success: false,
      });
    const why = this.voice.provider(provider).unavailable();
    if (why)
      throw new DomainError(
        provider === 'openai' ? 'voice.no_api_key' : 'voice.provider_unavailable',
        provider === 'openai' ? 'not_configured' : 'unavailable',
        why,
        { success: false },
      );
    const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && v.length <= 128 ? v.trim() : null);
    const agent = kind === 'realtime_agent' ? agentFields(b) : { chatSessionId: null, context: [] };
    const id = secureRandomBytes(18).toString('base64url');
    const resumeToken = secureRandomBytes(32).toString('base64url');
    const sampleRate = provider === 'openai' ? 24000 : 22050;
    // The app decodes `model` and `voice` as non-null strings: always name one. The settings' own apply to
    // their provider; a session asking another provider gets that provider's defaults.
    const sameProvider = this.voice.providerId(settings.provider) === provider;
    const defaults = this.voice.defaultsFor(SECTION[kind], provider);
    const voiceName = str(b.voice) ?? (sameProvider && typeof settings.voice === 'string' ? settings.voice : defaults.voice);
    const model = str(b.model) ?? (sameProvider && typeof settings.model === 'string' ? settings.model : defaults.model);
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + VOICE_SESSION_CONNECT_SECONDS * 1000).toISOString();
    await this.log.run(actor, (models) => {
      assertOpenSessionsBelow(models, actor, this.config.voice.maxOpenSessions);
      return [
        {
          type: 'voice.session_created',
          data: {
            sessionId: id,
            kind,
            profile: settings.profile,
            provider,
            via: principal.kind === 'api' ? ('api' as const) : ('session' as const),
            expiresAt,
            ...(agent.chatSessionId ? { chatSessionId: agent.chatSessionId } : {}),
          },
        },
      ];
    });
    this.live.set(id, {
      id,
      kind,
      inputBytes: 0,
      busy: false,
      ...agent,
      inputPcm: [],
      inputRate: 24000,
      maxInputChunkId: -1,
      abort: null,
      upstream: null,
      native: null,
      run: null,
      actor,
      tokenPrefix: principal.kind === 'device' ? principal.tokenPrefix : null,
      provider,
      model,
      voice: voiceName,
      sampleRate,
      profile: settings.profile,
      ws: null,
      everAttached: false,
      candidate: null,
      claimTimer: null,
      resumeDigest: this.secrets.digest(resumeToken),
      replay: new ReplayBuffer(this.config.voice.replayMaxFrames, this.config.voice.replayMaxBytes),
      acking: false,
      graceUntil: null,
      detaching: false,
      finalClose: null,
      responded: false,
      stream: null,
      eventSeq: 0,
      audioSeq: 0,
      chunks: 0,
      bytes: 0,
      chars: 0,
      createdAt: now.getTime(),
      idle: null,
      ended: false,
    });
    return {
      ok: true,
      success: true,
      session_id: id,
      websocket_path: `/voice/${SEGMENT[kind]}/${id}`,
      ...(kind === 'realtime_agent'
        ? provider === 'openai'
          ? { chat_session_id: agent.chatSessionId, broker_mode: 'provider_realtime', tool_surface: [...this.wire.tools] }
          : { chat_session_id: agent.chatSessionId, broker_mode: 'fallback_engine', tool_surface: [] }
        : {}),
      expires_at: Math.floor(Date.parse(expiresAt) / 1000),
      resume_supported: true,
      resume_token: resumeToken,
      resume_ttl_ms: this.config.voice.resumeGraceSeconds * 1000,
      provider,
      model,
      voice: voiceName,
      sample_rate: sampleRate,
      codec: 'pcm',
      protocol: this.wire.protocol(kind),
      profile: settings.profile,
      config_scope: settings.config_scope,
      fallback_to_global: settings.fallback_to_global,
    };
  }

  /** The HTTP server's upgrade for `/voice/...`: true when it was this module's to answer. */
  handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const pathname = new URL(req.url ?? '/', 'http://relay').pathname;
    if (!pathname.startsWith('/voice/')) return false;
    void this.upgrade(pathname, req, socket, head);
    return true;
  };

  private async upgrade(pathname: string, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const refuse = (status: number, code: string, error: string) => {
      const body = JSON.stringify({ ok: false, success: false, error, code });
      socket.end(
        `HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : status === 410 ? 'Gone' : status === 409 ? 'Conflict' : status === 403 ? 'Forbidden' : status === 401 ? 'Unauthorized' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    const m = PATH_RE.exec(pathname);
    if (!m) return refuse(404, 'not_found', 'no such voice socket');
    const kind = KIND_OF_SEGMENT[m[1]];
    let principal: Principal;
    try {
      principal = await authenticateVoice(this.auth, req, GRANT[kind]);
    } catch (err) {
      const r = toErrorResponse(err);
      return refuse(r.status, r.body.code, r.body.error);
    }
    const now = this.clock.now().getTime();
    const s = this.live.get(m[2]);
    if (!s) {
      // Ended after it had a socket: its own caller's late resume is told why, on the socket, as the app reads it.
      const t = this.ended.get(m[2], now);
      if (t && t.kind === kind && t.actor === actorOf(principal))
        return void this.wss.handleUpgrade(req, socket, head, (ws) => {
          ws.on('error', () => undefined);
          this.direct(ws, {
            type: 'voice.session.resume_failed',
            session_id: m[2],
            reason: t.reason === 'resume_expired' ? 'resume_expired' : 'session_closed',
            message: `this voice session has ended (${t.reason}); create a new one`,
          });
          ws.close(RESUME_CLOSE.gone, t.reason === 'resume_expired' ? 'resume expired' : 'session closed');
        });
      return refuse(404, 'voice.unknown_session', `no such ${kind} voice session`);
    }
    const known = this.log.models.voice.session(m[2]);
    if (!known || s.kind !== kind) return refuse(404, 'voice.unknown_session', `no such ${kind} voice session`);
    if (s.ended || (!s.everAttached && known.expiresAt <= now))
      return refuse(410, 'voice.session_ended', 'this voice session has ended (its socket must open within 60 s of creation)');
    if (actorOf(principal) !== s.actor) return refuse(403, 'voice.session_not_yours', 'this voice session belongs to another caller');
    this.wss.handleUpgrade(req, socket, head, (ws) => (s.everAttached || s.ended ? this.candidate(s, ws) : this.attach(s, ws)));
  }

  /** The session's first socket: it gets `voice.session.ready` at once. */
  private attach(s: Live, ws: WebSocket): void {
    s.everAttached = true;
    this.bind(s, ws);
    // Revoked while the upgrade was being authenticated: the bus event found no socket to close.
    if (!this.allowed(s)) return this.cut(s, 'session expired, revoked or without the voice grant');
    this.touch(s);
    this.send(s, this.ready(s));
  }

  /** `ws` becomes the session's socket: its frames are the session's, its close a drop or the end. */
  private bind(s: Live, ws: WebSocket): void {
    s.ws = ws;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (s.ws === ws) this.onFrame(s, data, isBinary);
    });
    ws.on('error', (err) => this.logger.debug({ err: err.message }, 'voice socket error'));
    ws.on('close', (code: number) => this.onClosed(s, ws, code));
  }

  /**
   * A later socket of the same caller (after a drop, or beside a socket the relay still thinks open): it
   * owns nothing until its first frame presents the resume token (`session.resume`) within CLAIM_MS.
   */
  private candidate(s: Live, ws: WebSocket): void {
    ws.on('error', (err) => this.logger.debug({ err: err.message }, 'voice socket error'));
    if (s.ended) return this.refuseResume(s, ws, 'session_closed', 'this voice session has ended; create a new one', RESUME_CLOSE.gone);
    if (s.candidate) this.refuseResume(s, s.candidate, 'session_not_claimed', 'another socket is resuming this session', RESUME_CLOSE.notClaimed);
    s.candidate = ws;
    if (s.claimTimer) clearTimeout(s.claimTimer);
    s.claimTimer = setTimeout(() => {
      if (s.candidate === ws)
        this.refuseResume(s, ws, 'session_not_claimed', `send session.resume within ${CLAIM_MS / 1000} s`, RESUME_CLOSE.notClaimed);
    }, CLAIM_MS);
    s.claimTimer.unref();
    let first = true;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (!first) return;
      first = false;
      const m = isBinary ? null : parseJsonObject(String(data));
      const claims = m !== null && (m.type === 'session.resume' || (m.type === 'session.start' && typeof m.resume_token === 'string'));
      if (!claims)
        return this.refuseResume(
          s,
          ws,
          'session_not_claimed',
          'this session already had a socket: the first frame must be session.resume',
          RESUME_CLOSE.notClaimed,
        );
      this.resume(s, ws, m);
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
  private resume(s: Live, ws: WebSocket, m: Record<string, unknown>): void {
    const parsed = parseResume(m);
    if (!parsed.ok) return this.refuseResume(s, ws, 'invalid_resume', parsed.error, RESUME_CLOSE.badResume);
    const c = parsed.claim;
    if (!Secrets.same(this.secrets.digest(c.token), s.resumeDigest))
      return this.refuseResume(s, ws, 'invalid_resume_token', 'the resume token is not this session’s', RESUME_CLOSE.invalidToken);
    if (s.ended) return this.refuseResume(s, ws, 'session_closed', 'this voice session has ended; create a new one', RESUME_CLOSE.gone);
    if (!this.allowed(s)) {
      this.refuseResume(s, ws, 'session_revoked', 'the relay session was revoked, expired or lost the voice grant', CLOSE.revoked);
      return this.cut(s, 'session expired, revoked or without the voice grant');
    }
    if (s.graceUntil !== null && this.clock.now().getTime() >= s.graceUntil) {
      this.refuseResume(s, ws, 'resume_expired', `the resume grace (${this.config.voice.resumeGraceSeconds} s) has passed`, RESUME_CLOSE.gone);
      return void this.end(s, 'resume_expired');
    }
    if (c.lastEventId > s.eventSeq || c.lastAudioEventId > s.audioSeq)
      return this.refuseResume(s, ws, 'invalid_cursor', `last_event_id is past this session's last event (${s.eventSeq})`, RESUME_CLOSE.badResume);
    const from = s.replay.since(c.lastEventId, Math.max(c.lastAudioEventId, c.lastPlayedAudioEventId));
    if (!from.ok) {
      this.refuseResume(
        s,
        ws,
        'replay_gap',
        `the frames after event ${from.missingAfter} are no longer held (a session holds at most ${s.replay.maxFrames} frames and ${s.replay.maxBytes} bytes for a resume); create a new session`,
        RESUME_CLOSE.gone,
      );
      return void this.end(s, 'resume_failed');
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
      this.bind(s, ws);
      // The relay still thought the old socket open (the client moved networks): it is closed, its close ignored.
      if (previous) previous.close(RESUME_CLOSE.superseded, 'superseded by a resumed socket');
    }
    if (wasDetached)
      void this.log
        .run(s.actor, (models) => resumeVoiceSession(models, s.id, c.lastEventId, from.frames.length))
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'voice session resume not recorded'));
    this.send(s, {
      type: 'voice.session.resumed',
      session_id: s.id,
      resume_supported: true,
      last_event_id: c.lastEventId,
      last_audio_event_id: c.lastAudioEventId,
      last_played_audio_event_id: c.lastPlayedAudioEventId,
      last_input_chunk_id: Math.max(c.lastInputChunkId, s.maxInputChunkId, 0),
      replay_event_count: from.frames.length,
    });
    this.send(s, {
      type: 'voice.replay.started',
      session_id: s.id,
      from_event_id: c.lastEventId,
      from_audio_event_id: c.lastAudioEventId,
      replay_event_count: from.frames.length,
    });
    for (const f of from.frames) ws.send(replayedJson(f));
    this.send(s, { type: 'voice.replay.done', session_id: s.id, replay_event_count: from.frames.length });
    this.touch(s);
  }

  /** A failed resume, said on that socket only (never held for a replay), and the socket closed. */
  private refuseResume(s: Live, ws: WebSocket, reason: ResumeFailure, message: string, code: number): void {
    if (s.candidate === ws) {
      s.candidate = null;
      if (s.claimTimer) clearTimeout(s.claimTimer);
      s.claimTimer = null;
    }
    this.direct(ws, { type: 'voice.session.resume_failed', session_id: s.id, reason, message });
    if (s.ws === ws) s.finalClose = 'resume_failed';
    ws.close(code, reason);
  }

  /** A frame to one socket outside the session's stream (no event id, not held). */
  private direct(ws: WebSocket, frame: Record<string, unknown>): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  }

  /**
   * The session's socket closed. A connection lost (DROP_CODES) holds the session for the resume grace, its
   * work going on; a close the client chose (1000, 1005 with no code, 1011 after an error, ...), one the
   * relay made on purpose, or a shutdown ends it.
   */
  private onClosed(s: Live, ws: WebSocket, code: number): void {
    if (s.ws !== ws) return;
    s.ws = null;
    if (s.idle) clearTimeout(s.idle);
    s.idle = null;
    if (s.ended) return;
    if (s.finalClose !== null || !DROP_CODES.has(code) || this.stopping)
      return void this.end(s, s.finalClose === 'revoked' ? 'revoked' : s.responded ? 'closed' : 'closed_before_response');
    const until = this.clock.now().getTime() + this.config.voice.resumeGraceSeconds * 1000;
    s.graceUntil = until;
    s.detaching = true;
    this.log
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
  }

  private ready(s: Live) {
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

  private onFrame(s: Live, data: RawData, isBinary: boolean): void {
    // Checked on every frame at the clock's now, not only when the sweep has written the expiry or a PATCH the loss.
    if (!this.allowed(s)) return this.cut(s, 'session expired, revoked or without the voice grant');
    this.touch(s);
    if (isBinary) return this.error(s, 'unsupported websocket frame: send JSON text');
    let msg: unknown;
    const text = String(data);
    if (jsonDepthExceeds(text)) return this.error(s, `message nests JSON deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      msg = JSON.parse(text);
    } catch {
      return this.error(s, 'invalid JSON message');
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return this.error(s, 'message must be a JSON object');
    const m = msg as Record<string, unknown>;
    switch (m.type) {
      case 'session.start':
        if (typeof m.resume_token === 'string') return this.resume(s, s.ws!, m);
        return this.send(s, this.ready(s));
      case 'session.resume':
        // On the socket that already holds the session: the same checks, and a replay of what it says it lacks.
        return this.resume(s, s.ws!, m);
      case 'client.ack':
      case 'playback.drained':
        return this.ack(s, m);
      case 'session.close':
        s.finalClose = 'closed';
        s.ws?.close(1000, 'session closed');
        return;
      case 'input_audio.append':
        if (s.kind === 'output') return this.error(s, 'unsupported message type: input_audio.append');
        return this.inputAudio(s, m);
    }
    if (s.kind === 'realtime_agent') {
      if (VoiceWire.isBranded(m.type, 'confirm'))
        // The agent API this relay drives asks no confirmations: nothing waits for this answer.
        return this.send(s, {
          type: this.wire.frame('confirmation.forwarded'),
          confirmation_id: typeof m.confirmation_id === 'string' ? m.confirmation_id.slice(0, 128) : null,
          forwarded: false,
          message: 'nothing is waiting for a confirmation',
        });
      if (VoiceWire.isBranded(m.type, 'result.respeak'))
        return this.send(s, { type: this.wire.frame('result.respeak_unavailable'), message: 'this relay runs no background tasks to repeat' });
    }
    if (s.kind === 'realtime_agent' && s.provider === 'openai') return this.onNativeFrame(s, m);
    switch (m.type) {
      case 'response.create':
        if (s.kind === 'realtime_agent') {
          if (s.busy) return this.error(s, 'response already running');
          void this.agent.turn(s, typeof m.text === 'string' ? m.text : typeof m.prompt === 'string' ? m.prompt : '');
          return;
        }
        if (s.busy || (s.responded && s.kind === 'output')) return this.error(s, s.busy ? 'response already running' : 'response already completed');
        void this.respond(s, m);
        return;
      case 'input_audio.commit':
        if (s.kind === 'realtime') {
          if (s.provider !== 'openai')
            return this.error(
              s,
              'the offline provider has no realtime input: its input audio is acknowledged, not heard; send text in response.create',
            );
          this.upstreamOf(s)
            ?.commitAudio()
            .catch((err: Error) => this.error(s, err.message, { code: (err as { code?: string }).code ?? 'voice.provider_error' }));
          return;
        }
        if (s.kind !== 'realtime_agent') return this.error(s, 'unsupported message type: input_audio.commit');
        if (s.busy) return this.error(s, 'response already running');
        void this.agent.turnFromAudio(s);
        return;
      case 'response.cancel':
        s.abort?.abort();
        s.stream?.stop();
        return;
      default:
        return this.error(s, `unsupported message type: ${String(m.type).slice(0, 40)}`);
    }
  }

  /** `client.ack {event_id}` (the app acks every frame): frames up to it need not be held for a replay. */
  private ack(s: Live, m: Record<string, unknown>): void {
    if (typeof m.event_id !== 'number' || !Number.isSafeInteger(m.event_id) || m.event_id <= 0) return;
    s.acking = true;
    s.replay.ack(m.event_id);
  }

  private async respond(s: Live, m: Record<string, unknown>): Promise<void> {
    const raw = typeof m.text === 'string' ? m.text : typeof m.prompt === 'string' ? m.prompt : '';
    const fromAudio = raw.trim() === '' && s.kind === 'realtime' && s.provider === 'openai' && s.inputBytes > 0;
    if (raw.trim() === '' && !fromAudio) return this.error(s, 'response.create missing text');
    if (raw.length > MAX_TTS_CHARS) return this.error(s, `text exceeds ${MAX_TTS_CHARS} characters`, { code: 'voice.text_too_long' });
    const text = sanitizeForSpeech(raw);
    if (text === '' && !fromAudio) return this.error(s, 'text is empty after removing markup');
    s.responded = true;
    s.busy = true;
    s.chars += text.length;
    const started = performance.now();
    let firstAudioMs: number | null = null;
    this.send(s, {
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
      const upstream = s.kind === 'realtime' && s.provider === 'openai' ? this.upstreamOf(s) : null;
      if (upstream) {
        const rt = upstream.respond(text === '' ? null : text);
        transcript = rt.transcript;
        s.stream = rt;
      } else
        s.stream =
          s.provider === 'openai' ? await openaiPcm(this.config.voice, text, s.voice, s.model) : offlinePcm(this.config.voice, text, s.voice);
      firstAudioMs = await this.pump(s, 'voice.audio.delta', started);
      s.stream = null;
      if (s.ended) return;
      const spoken = transcript?.();
      if (spoken) this.send(s, { type: 'voice.transcript.final', text: spoken });
      this.send(s, { type: 'voice.audio.done' });
      this.send(s, {
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
      this.error(s, message, { provider: s.provider, code: (err as { code?: string }).code ?? 'voice.provider_failed' });
    }
    s.busy = false;
    this.touch(s);
  }

  /** Reads the current stream into ~100 ms frames of `type`; returns when the first frame went out (ms since `started`). */
  private async pump(s: Live, type: string, started: number): Promise<number | null> {
    let first: number | null = null;
    const stream = s.stream!;
    const frameBytes = Math.round((stream.sampleRate * 2 * FRAME_MS) / 1000);
    let pending: Buffer = Buffer.alloc(0);
    for await (const chunk of stream.chunks) {
      if (s.ended) break;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= frameBytes && !s.ended) {
        await this.sendAudio(s, pending.subarray(0, frameBytes), type);
        first ??= performance.now() - started;
        pending = pending.subarray(frameBytes);
      }
    }
    if (pending.length >= 2 && !s.ended) await this.sendAudio(s, pending.subarray(0, pending.length - (pending.length % 2)), type);
    return first;
  }

  /** One audio frame, then the wait its consumer asks for (drain). */
  private async sendAudio(s: Live, pcm: Buffer, type = 'voice.audio.delta'): Promise<void> {
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
   * acked half the replay buffer, or (no socket: waiting for a resume) while the replay buffer is half
   * full, the caller waits and so the provider's stream is not read. A session that ends stops the wait;
   * a held one ends at the grace, a silent one at the idle close, so the wait is bounded.
   */
  private async drain(s: Live): Promise<void> {
    for (;;) {
      if (s.ended) return;
      const ws = s.ws;
      if (ws) {
        if (ws.readyState !== ws.OPEN) return;
        // A client that acks is never further behind than half the buffer: a drop then loses nothing it lacks.
        if (s.acking && s.replay.full) {
          await sleep(10);
          continue;
        }
        if (ws.bufferedAmount <= HIGH_WATER) return;
        while (!s.ended && s.ws === ws && ws.readyState === ws.OPEN && ws.bufferedAmount > LOW_WATER) await sleep(10);
        return;
      }
      if (!s.replay.full) return;
      await sleep(20);
    }
  }

  /** Every frame of the session's stream: numbered, held for a replay (bounded), and sent when a socket is there. */
  private send(s: Live, event: Record<string, unknown>): void {
    if (s.ended) return;
    s.eventSeq++;
    const json = JSON.stringify({ ...event, event_id: s.eventSeq, at_ms: Math.round(this.clock.now().getTime() - s.createdAt) });
    if (!CONNECTION_FRAMES.has(event.type as string))
      s.replay.push(s.eventSeq, typeof event.audio_event_id === 'number' ? event.audio_event_id : null, json);
    const ws = s.ws;
    if (ws && ws.readyState === ws.OPEN) ws.send(json);
  }

  private error(s: Live, message: string, extra: Record<string, unknown> = {}): void {
    this.send(s, { type: 'voice.error', message, ...extra });
  }

  private touch(s: Live): void {
    if (s.idle) clearTimeout(s.idle);
    s.idle = setTimeout(() => {
      if (!s.ws) return;
      s.finalClose = 'idle';
      s.ws.close(1000, 'idle');
    }, IDLE_MS);
    s.idle.unref();
  }

  /**
   * `input_audio.append {audio_base64, sample_rate?, chunk_id?}` for every session that takes audio: checked,
   * counted against the session's cap, then kept (the fallback agent transcribes it at commit) or forwarded
   * to the provider's realtime socket at its 24 kHz (the app records 16 kHz), and acknowledged. A chunk the
   * app sends again after a resume (a `chunk_id` already taken) is acknowledged, not used twice.
   */
  private inputAudio(s: Live, m: Record<string, unknown>): void {
    const audio = typeof m.audio_base64 === 'string' ? m.audio_base64.trim() : '';
    if (audio === '' || !/^[A-Za-z0-9+/]*={0,2}$/.test(audio))
      return this.error(s, audio === '' ? 'input_audio.append missing audio_base64' : 'input_audio.append audio_base64 is invalid');
    // The pattern above allows two '=' at most, at the end.
    const n = Math.floor(((audio.length - (audio.endsWith('==') ? 2 : audio.endsWith('=') ? 1 : 0)) * 3) / 4);
    const chunk = chunkOf(m);
    const rate =
      typeof m.sample_rate === 'number' && Number.isInteger(m.sample_rate) && m.sample_rate >= 8000 && m.sample_rate <= 48000 ? m.sample_rate : 24000;
    if (chunk.input_chunk_id !== undefined && chunk.input_chunk_id <= s.maxInputChunkId)
      return this.send(s, {
        type: 'voice.input_audio.received',
        byte_count: 0,
        total_bytes: s.inputBytes,
        sample_rate: rate,
        duplicate: true,
        ...chunk,
      });
    if (s.inputBytes + n > MAX_INPUT_AUDIO_BYTES)
      return this.error(s, `input audio exceeds ${MAX_INPUT_AUDIO_BYTES} bytes in this session`, { code: 'voice.audio_too_large' });
    s.inputBytes += n;
    if (chunk.input_chunk_id !== undefined) s.maxInputChunkId = chunk.input_chunk_id;
    const at24k = () => (rate === 24000 ? audio : pcm16Resampled(Buffer.from(audio, 'base64'), rate, 24000).toString('base64'));
    if (s.provider === 'openai' && s.kind === 'realtime_agent') this.nativeOf(s)?.appendAudio(at24k());
    else if (s.provider === 'openai' && s.kind === 'realtime')
      this.upstreamOf(s)
        ?.appendAudio(at24k())
        .catch((err: Error) => this.error(s, err.message, { code: (err as { code?: string }).code ?? 'voice.provider_error' }));
    else if (s.kind === 'realtime_agent') {
      s.inputPcm.push(Buffer.from(audio, 'base64'));
      s.inputRate = rate;
    }
    this.send(s, { type: 'voice.input_audio.received', byte_count: n, total_bytes: s.inputBytes, sample_rate: rate, ...chunk });
  }

  /** realtime_agent with a realtime provider: frames go to the provider-native engine. */
  private onNativeFrame(s: Live, m: Record<string, unknown>): void {
    const link = this.nativeOf(s);
    if (!link) return;
    switch (m.type) {
      case 'input_audio.commit':
        s.responded = true;
        return link.commit();
      case 'response.create': {
        const text = typeof m.text === 'string' ? m.text.trim() : '';
        if (text === '') return this.error(s, 'response.create missing text (or send input_audio.commit)');
        if (text.length > MAX_TTS_CHARS) return this.error(s, `text exceeds ${MAX_TTS_CHARS} characters`, { code: 'voice.text_too_long' });
        s.responded = true;
        s.chars += text.length;
        return link.say(text);
      }
      case 'response.cancel':
        return link.cancel();
      default:
        return this.error(s, `unsupported message type: ${String(m.type).slice(0, 40)}`);
    }
  }

  private nativeOf(s: Live): NativeAgentLink | null {
    if (s.native) return s.native;
    try {
      s.native = new NativeAgentLink(this.config, s, this.wire, () => this.clock.now().getTime(), {
        send: (x, e) => this.send(x, e),
        error: (x, msg, extra) => this.error(x, msg, extra),
        audio: (x, pcm, type) => this.sendAudio(x, pcm, type),
        ask: (x, text, signal, run) => this.agent.ask(x, text, signal, run),
      });
      return s.native;
    } catch (err) {
      this.error(s, (err as Error).message, { code: (err as { code?: string }).code ?? 'voice.provider_error' });
      return null;
    }
  }

  /** The realtime session's provider socket, opened on first use (null, with a voice.error sent, when it cannot be). */
  private upstreamOf(s: Live): RealtimeUpstream | null {
    if (s.upstream) return s.upstream;
    try {
      s.upstream = new RealtimeUpstream(this.config.voice, s.voice, s.model, (frame) => this.send(s, frame));
      return s.upstream;
    } catch (err) {
      this.error(s, (err as Error).message, { code: (err as { code?: string }).code ?? 'voice.provider_error' });
      return null;
    }
  }

  /** The session's work stops and its memory goes; a late resume by its caller is told why (Tombstones). */
  private teardown(s: Live, reason: string): void {
    s.ended = true;
    s.abort?.abort();
    s.upstream?.close();
    s.native?.close();
    s.stream?.stop();
    if (s.run && !s.run.ended) s.run.ended = true;
    if (s.idle) clearTimeout(s.idle);
    if (s.claimTimer) clearTimeout(s.claimTimer);
    s.candidate?.close(RESUME_CLOSE.gone, 'session closed');
    s.candidate = null;
    s.replay.clear();
    s.inputPcm = [];
    this.live.delete(s.id);
    if (s.everAttached) this.ended.add(s.id, { actor: s.actor, kind: s.kind, reason }, this.clock.now().getTime());
    if (s.ws && s.ws.readyState === s.ws.OPEN) {
      s.finalClose ??= reason;
      s.ws.close(RESUME_CLOSE.gone, 'session closed');
    }
  }

  private async end(s: Live, reason: string): Promise<void> {
    if (s.ended) return;
    const totals = { chunks: s.chunks, bytes: s.bytes, chars: s.chars };
    this.teardown(s, reason);
    await this.log
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
    this.wss.close();
  }
}

/**
 * The app numbers its mic chunks (`chunk_id`) and drops a chunk from its resend buffer once an ack names it
 * as `input_chunk_id` (notes of the app's RelayVoiceClient); absent when the client sent none.
 */
function chunkOf(m: Record<string, unknown>): { input_chunk_id?: number } {
  return typeof m.chunk_id === 'number' && Number.isSafeInteger(m.chunk_id) && m.chunk_id >= 0 ? { input_chunk_id: m.chunk_id } : {};
}

/** 16-bit little-endian mono PCM from one rate to another (wav.ts's resampler). */
function pcm16Resampled(pcm: Buffer, from: number, to: number): Buffer {
  const samples = new Float32Array(Math.floor(pcm.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
  return writeWav16(resample({ sampleRate: from, samples }, to)).subarray(44);
}
