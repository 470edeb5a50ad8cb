import type { Projection, StoredEvent, StoredRelayEvent, VoiceOutcome, VoiceSessionKind, VoiceVia } from '@svc/events';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';

/** Calls and ended sessions the console lists (the newest). */
export const VOICE_CALLS_KEPT = 100;
export const VOICE_SESSIONS_KEPT = 50;

type MutableVoiceCall = {
  seq: number;
  at: number;
  kind: 'transcribe' | 'synthesize';
  provider: string;
  profile: string | null;
  via: VoiceVia;
  actor: string;
  outcome: VoiceOutcome;
  durationMs: number;
  bytes: number;
  chars: number;
  audioMs: number | null;
  error: string | null;
};

type MutableVoiceSessionRecord = {
  sessionId: string;
  kind: VoiceSessionKind;
  provider: string;
  profile: string | null;
  via: VoiceVia;
  actor: string;
  createdAt: number;
  endedAt: number;
  reason: string;
  chunks: number;
  bytes: number;
  chars: number;
  /** Times its socket dropped and it was held for a resume, and times a new socket took it over. */
  drops: number;
  resumes: number;
};

/** One `/voice/transcribe` or `/voice/synthesize` call: who, which provider, how it ended and how long it took. Never text or audio. */
export type VoiceCall = DeepReadonly<MutableVoiceCall>;
/** A voice session from creation to its end (`reason` as recorded, or `relay_restarted` when a start found it open). */
export type VoiceSessionRecord = DeepReadonly<MutableVoiceSessionRecord>;

/** An open session, with the seq of the last event that touched it (the same event seen twice counts once). */
type Open = Omit<MutableVoiceSessionRecord, 'endedAt' | 'reason' | 'chunks' | 'bytes' | 'chars'> & { seq: number };

type State = { calls: MutableVoiceCall[]; ended: MutableVoiceSessionRecord[]; open: Open[] };

/**
 * What relay voice did lately, for the operator's console: the newest transcribe and synthesize calls
 * with their outcome and latency, and the newest sessions that ended with their reason and totals. The
 * VoiceProjection keeps what decisions need (open sessions, settings); this keeps history. Bounded, and
 * durable across restarts (a session a start finds open is ended as `relay_restarted`: nothing recorded
 * its end, and it cannot outlive the process). The same stored event seen twice counts once.
 */
export class VoiceActivityProjection implements Projection<State> {
  private calls: MutableVoiceCall[] = [];
  private ended: MutableVoiceSessionRecord[] = [];
  private readonly open = new Map<string, Open>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        for (const s of this.open.values()) this.end(s, eventAtMs(e), 'relay_restarted', { chunks: 0, bytes: 0, chars: 0 });
        this.open.clear();
        break;
      case 'voice.transcribed':
      case 'voice.synthesized':
        if ((this.calls.at(-1)?.seq ?? 0) >= e.seq) break;
        this.calls.push({
          seq: e.seq,
          at: eventAtMs(e),
          kind: e.type === 'voice.transcribed' ? 'transcribe' : 'synthesize',
          provider: e.data.provider,
          profile: e.data.profile,
          via: e.data.via,
          actor: e.actor,
          outcome: e.data.outcome,
          durationMs: e.data.durationMs,
          bytes: e.data.bytes,
          chars: e.data.chars,
          audioMs: e.type === 'voice.transcribed' ? e.data.audioMs : null,
          error: e.data.error ?? null,
        });
        if (this.calls.length > VOICE_CALLS_KEPT) this.calls.splice(0, this.calls.length - VOICE_CALLS_KEPT);
        break;
      case 'voice.session_created':
        this.open.set(e.data.sessionId, {
          sessionId: e.data.sessionId,
          kind: e.data.kind,
          provider: e.data.provider,
          profile: e.data.profile,
          via: e.data.via,
          actor: e.actor,
          createdAt: eventAtMs(e),
          drops: 0,
          resumes: 0,
          seq: e.seq,
        });
        break;
      case 'voice.session_detached': {
        const s = this.open.get(e.data.sessionId);
        if (s && e.seq > s.seq) {
          s.drops++;
          s.seq = e.seq;
        }
        break;
      }
      case 'voice.session_resumed': {
        const s = this.open.get(e.data.sessionId);
        if (s && e.seq > s.seq) {
          s.resumes++;
          s.seq = e.seq;
        }
        break;
      }
      case 'voice.session_ended': {
        const s = this.open.get(e.data.sessionId);
        if (!s) break;
        this.open.delete(s.sessionId);
        this.end(s, eventAtMs(e), e.data.reason, e.data);
        break;
      }
      default:
        break;
    }
  }

  private end({ seq: _seq, ...s }: Open, at: number, reason: string, totals: { chunks: number; bytes: number; chars: number }): void {
    this.ended.push({ ...s, endedAt: at, reason, chunks: totals.chunks, bytes: totals.bytes, chars: totals.chars });
    if (this.ended.length > VOICE_SESSIONS_KEPT) this.ended.splice(0, this.ended.length - VOICE_SESSIONS_KEPT);
  }

  /** The newest calls first. */
  recentCalls(limit = VOICE_CALLS_KEPT): readonly VoiceCall[] {
    return this.calls.slice(-limit).reverse();
  }

  /** The newest ended sessions first. */
  recentSessions(limit = VOICE_SESSIONS_KEPT): readonly VoiceSessionRecord[] {
    return this.ended.slice(-limit).reverse();
  }

  /** How often an open session's socket dropped and was taken over again. */
  resumesOf(sessionId: string): Readonly<{ drops: number; resumes: number }> {
    const s = this.open.get(sessionId);
    return s ? { drops: s.drops, resumes: s.resumes } : { drops: 0, resumes: 0 };
  }

  snapshot(): State {
    return {
      calls: this.calls.map((c) => ({ ...c })),
      ended: this.ended.map((s) => ({ ...s })),
      open: [...this.open.values()].map((s) => ({ ...s })),
    };
  }

  restore(state: State): void {
    this.calls = (state.calls ?? []).map((c) => ({ ...c }));
    this.ended = (state.ended ?? []).map((s) => ({ ...s }));
    this.open.clear();
    for (const s of state.open ?? []) this.open.set(s.sessionId, { ...s });
  }
}
