import type { WebSocket } from 'ws';
import type { AgentRun } from './agent-run';
import type { ContextMessage } from './voice.dto';
import type { NativeAgentLink } from './native-agent';
import type { PcmStream } from './pcm-stream';
import type { RealtimeUpstream } from './realtime-upstream';
import { ReplayBuffer } from './replay-buffer';
import type { Kind } from './session-kinds';
import type { VoiceProvider } from './voice-provider';

/** What every voice session holds, whatever its kind: who and what it speaks with, its socket, its stream. */
type SessionBase = {
  readonly id: string;
  readonly actor: string;
  /** The relay session it belongs to (null: opened with the API bearer, tied to no relay session). */
  readonly tokenPrefix: string | null;
  /** The provider it speaks with: `provider` its id on the wire, `engine` the provider itself. */
  readonly provider: string;
  readonly engine: VoiceProvider;
  readonly model: string;
  readonly voice: string;
  /** The language it speaks, as its provider names it (null: the voice decides). */
  readonly language: string | null;
  readonly sampleRate: number;
  readonly profile: string | null;
  readonly createdAt: number;

  // The socket.
  ws: WebSocket | null;
  /** A socket has been attached once: a later one must resume. */
  everAttached: boolean;
  /** A second socket waiting to present the resume token, and its deadline. */
  candidate: WebSocket | null;
  claimTimer: NodeJS.Timeout | null;
  /** The digest of the resume token (the token itself went to the creator only). */
  readonly resumeDigest: string;
  /** The client acks frames (`client.ack`, as the app does): its stream is paced by its acks. */
  acking: boolean;
  /** The socket dropped: the session waits for a resume until then (clock ms). */
  graceUntil: number | null;
  /** The drop is being recorded (the expiry sweep must not take the session meanwhile). */
  detaching: boolean;
  /** The relay closes the socket on purpose (revoked, idle, session.close, shutdown): the session ends with it. */
  finalClose: string | null;
  idle: NodeJS.Timeout | null;

  // The stream: every frame numbered (`event_id`), audio frames also (`audio_event_id`), held for a replay.
  readonly replay: ReplayBuffer;
  eventSeq: number;
  audioSeq: number;
  /** A response was asked for (a close before one is `closed_before_response`). */
  responded: boolean;
  /** A response is being rendered (from response.create to done or error). */
  busy: boolean;
  stream: PcmStream | null;
  abort: AbortController | null;
  /** Totals for the session's end event. */
  chunks: number;
  bytes: number;
  chars: number;
  ended: boolean;
};

/** The mic audio a realtime session took: counted against its cap; a chunk sent again after a resume is not used twice. */
type MicInput = { inputBytes: number; maxInputChunkId: number };

export type OutputSession = SessionBase & { readonly kind: 'output' };

export type RealtimeSession = SessionBase &
  MicInput & {
    readonly kind: 'realtime';
    /** With a realtime provider: the session's socket to the provider's realtime API (opened on first use). */
    upstream: RealtimeUpstream | null;
  };

export type AgentSession = SessionBase &
  MicInput & {
    readonly kind: 'realtime_agent';
    /** The agent chat session the turns continue, and the conversation so far. */
    readonly chatSessionId: string | null;
    context: ContextMessage[];
    /** The fallback engine: mic audio not yet committed, at its rate. */
    inputPcm: Buffer[];
    inputRate: number;
    /** With a realtime provider: the provider-native engine (native-agent.ts). */
    native: NativeAgentLink | null;
    /** The agent run in flight, for its periodic progress. */
    run: AgentRun | null;
  };

export type VoiceSession = OutputSession | RealtimeSession | AgentSession;

export type NewSession = Pick<
  SessionBase,
  'id' | 'actor' | 'tokenPrefix' | 'engine' | 'model' | 'voice' | 'language' | 'sampleRate' | 'profile' | 'createdAt' | 'resumeDigest'
> & { replay: { maxFrames: number; maxBytes: number } };

/** A session as created: no socket yet, nothing said. */
export function newSession(kind: Kind, n: NewSession, agent: { chatSessionId: string | null; context: ContextMessage[] }): VoiceSession {
  const base: SessionBase = {
    ...n,
    provider: n.engine.id,
    ws: null,
    everAttached: false,
    candidate: null,
    claimTimer: null,
    acking: false,
    graceUntil: null,
    detaching: false,
    finalClose: null,
    idle: null,
    replay: new ReplayBuffer(n.replay.maxFrames, n.replay.maxBytes),
    eventSeq: 0,
    audioSeq: 0,
    responded: false,
    busy: false,
    stream: null,
    abort: null,
    chunks: 0,
    bytes: 0,
    chars: 0,
    ended: false,
  };
  const mic: MicInput = { inputBytes: 0, maxInputChunkId: -1 };
  switch (kind) {
    case 'output':
      return { ...base, kind };
    case 'realtime':
      return { ...base, ...mic, kind, upstream: null };
    case 'realtime_agent':
      return { ...base, ...mic, kind, ...agent, inputPcm: [], inputRate: 24000, native: null, run: null };
  }
}

/** Stops what the session is doing: the request in flight, the speech, the provider's socket, the agent engine. */
export function stopWork(s: VoiceSession): void {
  s.abort?.abort();
  s.stream?.stop();
  if (s.kind === 'realtime') s.upstream?.close();
  if (s.kind === 'realtime_agent') s.native?.close();
}
