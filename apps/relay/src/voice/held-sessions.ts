import type { VoiceSession } from './voice-session';

/** What the console shows of the sessions held for a resume. */
export type HeldSummary = { sessions: number; bytes: number; maxBytes: number };

/**
 * The voice sessions whose socket dropped and that wait for a resume, in the order they dropped, and the
 * one bound on what they hold together. Each holds at most its replay buffer (RELAY_VOICE_REPLAY_MAX_BYTES),
 * but a held session lasts the app's whole retry window (five minutes), and every phone may hold several:
 * without a total, phones that lose their route at once would hold replay buffers without bound. Past
 * `maxBytes` (RELAY_VOICE_HELD_MAX_BYTES) the session held longest goes first: it is the least likely to
 * come back, and a phone that just dropped is the one about to resume.
 */
export class HeldSessions {
  private readonly held = new Map<string, VoiceSession>();

  constructor(readonly maxBytes: number) {}

  hold(s: VoiceSession): void {
    this.held.set(s.id, s);
  }

  release(s: VoiceSession): void {
    this.held.delete(s.id);
  }

  has(id: string): boolean {
    return this.held.has(id);
  }

  /** The bytes one held session holds, or null when it is not held. */
  bytesOf(id: string): number | null {
    return this.held.get(id)?.replay.bytes ?? null;
  }

  /** What they hold together (summed when asked: buffers change on every frame, the held ones are few). */
  get bytes(): number {
    let n = 0;
    for (const s of this.held.values()) n += s.replay.bytes;
    return n;
  }

  summary(): HeldSummary {
    return { sessions: this.held.size, bytes: this.bytes, maxBytes: this.maxBytes };
  }

  /** The sessions to end, held longest first, until the rest fit the bound (they leave the set here). */
  overflow(): VoiceSession[] {
    const out: VoiceSession[] = [];
    let total = this.bytes;
    for (const s of this.held.values()) {
      if (total <= this.maxBytes) break;
      total -= s.replay.bytes;
      out.push(s);
    }
    for (const s of out) this.held.delete(s.id);
    return out;
  }
}
