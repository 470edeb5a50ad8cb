import { DomainError, ReadModels, type ErrorKind } from '@svc/domain';
import type { NewEvent, RelayEvent, StoredEvent, StoredRelayEvent } from '@svc/events';

/** The unit tests' "now" unless a step says otherwise. */
export const T0 = new Date('2026-03-01T12:00:00.000Z');

type When = Date | number;
const toDate = (t: When): Date => (typeof t === 'number' ? new Date(t) : t);

type AnyEvent = NewEvent<RelayEvent> | { type: string; data: object };

/** A pure rule under test: the read models and "now" in, the events it would write out. */
export type Decision = (m: ReadModels, now: Date) => readonly NewEvent<RelayEvent>[];

/** An event `.then` expects, as the decision returns it; `data` may hold asymmetric matchers (`expect.any(String)`). */
export type ExpectedEvent = { type: RelayEvent['type']; data: unknown; actor?: string };

/** An event as if the store had written it (seq, id, time and actor stamped; no chain). */
function stamp(e: AnyEvent, seq: number, at: When, actor: string): StoredRelayEvent {
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
  event(e: AnyEvent, at: When = T0, actor = 'system'): StoredRelayEvent {
    const stored = stamp(e, ++this.seq, at, actor);
    this.models.apply(stored);
    this.log.push(stored);
    return stored;
  }

  /** Applies several events (a decision's output, or hand-written ones) at `at`. */
  apply(events: ReadonlyArray<AnyEvent>, at: When = T0, actor = 'system'): this {
    for (const e of events) this.event(e, at, actor);
    return this;
  }

  /** Runs a decision against the current models at `now` and applies what it returns. */
  when(decide: Decision, now: When = T0): StoredRelayEvent[] {
    const d = toDate(now);
    return decide(this.models, d).map((e) => this.event(e, d));
  }
}

/**
 * The ending of `given(...).when(decision)`: the decision runs only here, so a refusal can be expected.
 * `then` compares every event it returns, in order, with `expected` (Jest's `toEqual`), then applies
 * them (the state is returned for checks of the read models); `thenThrows` expects a `DomainError`.
 */
export class Outcome {
  constructor(
    private readonly state: Given,
    private readonly decide: Decision,
    private readonly now: Date,
  ) {}

  then(expected: readonly ExpectedEvent[]): Given {
    // Not a promise: a test that returns or awaits a scenario would land here with Jest's callbacks.
    if (typeof expected === 'function') throw new Error('given(...).when(...) is not a promise: end it with .then([events]) or .thenThrows(code)');
    const events = this.decide(this.state.models, this.now);
    expect(events).toEqual(expected);
    this.state.apply(events, this.now);
    return this.state;
  }

  /** The decision refuses with this code (and kind, when given), and writes nothing. Returns the error for closer checks. */
  thenThrows(code: string, kind?: ErrorKind): DomainError {
    let events: readonly NewEvent<RelayEvent>[];
    try {
      events = this.decide(this.state.models, this.now);
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect({ code: (e as DomainError).code, kind: (e as DomainError).kind }).toEqual({ code, kind: kind ?? (e as DomainError).kind });
      return e as DomainError;
    }
    throw new Error(`expected ${code}, but the decision returned [${events.map((e) => e.type).join(', ')}]`);
  }
}

/** `given(history)`: the state a scenario starts from; `.when(decision, now?)` names the decision under test. */
export class Scenario {
  constructor(readonly state: Given) {}

  get models(): ReadModels {
    return this.state.models;
  }

  when(decide: Decision, now: When = T0): Outcome {
    return new Outcome(this.state, decide, toDate(now));
  }
}

/**
 * `given([events]).when(decision).then([events])` or `.thenThrows(code)` (emmett's specification). The
 * history is events applied at `at`, or a `Given` built step by step (then the scenario continues it).
 */
export function given(history: Given | ReadonlyArray<AnyEvent> = [], at: When = T0): Scenario {
  if (history instanceof Given) return new Scenario(history);
  return new Scenario(new Given().apply(history, at));
}

export const at = (base: Date, seconds: number): Date => new Date(base.getTime() + seconds * 1000);
