import type { Kind } from './voice-wire';

/**
 * Voice session resume (the app's `session.resume`, RelayVoiceClient.kt 942-960 and 1742-1745): what a
 * claim carries, why one fails, and the close codes, which follow the reference relay's.
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

export type ResumeClaim = { token: string; lastEventId: number; lastAudioEventId: number; lastPlayedAudioEventId: number; lastInputChunkId: number };

const count = (v: unknown): number | null =>
  v === undefined || v === null ? 0 : Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null;

/**
 * `{type: "session.resume", resume_token, last_event_id, last_audio_event_id, last_played_audio_event_id?,
 * last_input_chunk_id?}` checked (also `session.start` carrying a `resume_token`, as the reference reads it).
 */
export function parseResume(m: Record<string, unknown>): { ok: true; claim: ResumeClaim } | { ok: false; error: string } {
  const token = m.resume_token;
  if (typeof token !== 'string' || token === '' || token.length > 256)
    return { ok: false, error: 'session.resume needs the resume_token of the session' };
  const lastEventId = count(m.last_event_id);
  const lastAudioEventId = count(m.last_audio_event_id);
  const lastPlayedAudioEventId = count(m.last_played_audio_event_id);
  const lastInputChunkId = count(m.last_input_chunk_id);
  if (lastEventId === null || lastAudioEventId === null || lastPlayedAudioEventId === null || lastInputChunkId === null)
    return { ok: false, error: 'last_event_id, last_audio_event_id, last_played_audio_event_id and last_input_chunk_id are whole numbers >= 0' };
  return { ok: true, claim: { token, lastEventId, lastAudioEventId, lastPlayedAudioEventId, lastInputChunkId } };
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
