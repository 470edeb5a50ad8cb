/** One frame as it went out: its numbers and its serialized JSON (an object, so it ends with `}`). */
export type HeldFrame = { eventId: number; audioEventId: number | null; json: string; bytes: number };

export type ReplayFrom = { ok: true; frames: HeldFrame[] } | { ok: false; missingAfter: number };

/**
 * The frames a voice session sent that a resuming client may not have (WIRE: `session.resume`), bounded in
 * frames and bytes: past either bound the oldest frame goes, and a client that asks for a frame no longer
 * held is told so (a gap) rather than sent a stream with a hole in it. Frames the client acknowledged
 * (`client.ack {event_id}`) are dropped early; they are not a gap, since a client resumes after them.
 */
export class ReplayBuffer {
  private frames: HeldFrame[] = [];
  private head = 0;
  private held = 0;
  /** The highest event id dropped by a bound (a resume from before it has a gap). */
  private evictedThrough = 0;
  private acked = 0;

  constructor(
    readonly maxFrames: number,
    readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.frames.length - this.head;
  }

  get bytes(): number {
    return this.held;
  }

  /** Past half of either bound: a producer that can wait (a stream read while no socket takes it) should. */
  get full(): boolean {
    return this.size * 2 >= this.maxFrames || this.held * 2 >= this.maxBytes;
  }

  push(eventId: number, audioEventId: number | null, json: string): void {
    if (eventId <= this.acked) return;
    const bytes = Buffer.byteLength(json);
    this.frames.push({ eventId, audioEventId, json, bytes });
    this.held += bytes;
    while (this.size > 0 && (this.size > this.maxFrames || this.held > this.maxBytes)) {
      const f = this.shift();
      this.evictedThrough = Math.max(this.evictedThrough, f.eventId);
    }
    this.compact();
  }

  /**
   * The client has every frame up to `eventId`. Only an ack naming a held frame counts: frames arrive in
   * order, so that frame's ack vouches for those before it, while a frame outside the stream (say
   * `voice.session.resumed`, numbered after the frames it precedes as a replay) vouches for nothing.
   */
  ack(eventId: number): void {
    if (eventId <= this.acked || !this.holds(eventId)) return;
    this.acked = eventId;
    while (this.size > 0 && this.frames[this.head].eventId <= eventId) this.shift();
    this.compact();
  }

  /** Whether a frame with this id is held (binary search: ids only grow). */
  private holds(eventId: number): boolean {
    let lo = this.head;
    let hi = this.frames.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const id = this.frames[mid].eventId;
      if (id === eventId) return true;
      if (id < eventId) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /**
   * What a client that has every frame up to `lastEventId` (and every audio frame up to
   * `lastAudioEventId`) is missing, in order; or where the gap starts when a bound dropped some of it.
   */
  since(lastEventId: number, lastAudioEventId: number): ReplayFrom {
    if (this.evictedThrough > lastEventId) return { ok: false, missingAfter: lastEventId };
    const out: HeldFrame[] = [];
    for (let i = this.head; i < this.frames.length; i++) {
      const f = this.frames[i];
      if (f.eventId <= lastEventId) continue;
      if (f.audioEventId !== null && f.audioEventId <= lastAudioEventId) continue;
      out.push(f);
    }
    return { ok: true, frames: out };
  }

  clear(): void {
    this.frames = [];
    this.head = 0;
    this.held = 0;
  }

  private shift(): HeldFrame {
    const f = this.frames[this.head];
    this.frames[this.head] = undefined as unknown as HeldFrame;
    this.head++;
    this.held -= f.bytes;
    return f;
  }

  /** Drops the spent front of the array once it is most of it (amortized O(1) per frame). */
  private compact(): void {
    if (this.head > 64 && this.head * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.head);
      this.head = 0;
    }
  }
}

/** A held frame as sent again: its JSON with `replayed: true` added. */
export function replayedJson(f: HeldFrame): string {
  return `${f.json.slice(0, -1)},"replayed":true}`;
}
