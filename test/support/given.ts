import { ReadModels } from '@svc/domain';
import type { NewEvent, RelayEvent, StoredEvent, StoredRelayEvent } from '@svc/events';

/** The unit tests' "now" unless a step says otherwise. */
export const T0 = new Date('2026-03-01T12:00:00.000Z');

type When = Date | number;
const toDate = (t: When): Date => (typeof t === 'number' ? new Date(t) : t);

let looseSeq = 0;

/** An event as if the store had written it (seq, id, time and actor stamped; no chain). */
function stamp(e: NewEvent<RelayEvent> | { type: string; data: object }, seq: number, at: When, actor: string): StoredRelayEvent {
  return {
    seq,
    id: `e${seq}`,
    at: toDate(at).toISOString(),
    type: e.type,
    actor: (e as NewEvent<RelayEvent>).actor ?? actor,
    data: e.data,
    v: 1,
    prev: '',
    hash: '',
  } as StoredEvent as StoredRelayEvent;
}

/**
 * Unit tests of the pure rules, in the emmett style: `given` events (or decisions) build the read models,
 * `when` runs a decision and returns the events it would write, applied so the next step sees them. No
 * disk, no Nest. Times are Dates or epoch milliseconds; the default is T0.
 */
export class Given {
  readonly models = new ReadModels();
  readonly log: StoredRelayEvent[] = [];
  private seq = 0;

  /** Applies an event as if the store had written it at `at`. */
  event(e: NewEvent<RelayEvent> | { type: string; data: object }, at: When = T0, actor = 'system'): StoredRelayEvent {
    const stored = stamp(e, ++this.seq, at, actor);
    this.models.apply(stored);
    this.log.push(stored);
    return stored;
  }

  /** Applies several events (a decision's output, or hand-written ones) at `at`. */
  apply(events: ReadonlyArray<NewEvent<RelayEvent> | { type: string; data: object }>, at: When = T0, actor = 'system'): this {
    for (const e of events) this.event(e, at, actor);
    return this;
  }

  /** Runs a decision against the current models at `now` and applies what it returns. */
  when(decide: (m: ReadModels, now: Date) => readonly NewEvent<RelayEvent>[], now: When = T0): StoredRelayEvent[] {
    const d = toDate(now);
    return decide(this.models, d).map((e) => this.event(e, d));
  }
}

/** For tests that hold their own ReadModels: applies `events` to them as stored events and returns those. */
export function given(models: ReadModels, events: ReadonlyArray<NewEvent<RelayEvent>>, at: When | string = T0, actor = 'system'): StoredRelayEvent[] {
  return events.map((e) => {
    const stored = stamp(e, ++looseSeq, typeof at === 'string' ? new Date(at) : at, actor);
    models.apply(stored);
    return stored;
  });
}

export const at = (base: Date, seconds: number): Date => new Date(base.getTime() + seconds * 1000);
