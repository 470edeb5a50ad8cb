import { ReadModels } from '@svc/domain';
import type { NewEvent, RelayEvent, StoredEvent, StoredRelayEvent } from '@svc/events';

/**
 * Unit tests of the pure rules: `given` events (or decisions) build the read models, `when` runs a
 * decision and returns the events it would write, applied so the next step sees them. No disk, no Nest.
 */
export class Given {
  readonly models = new ReadModels();
  readonly log: StoredRelayEvent[] = [];
  private seq = 0;

  /** Applies an event as if the store had written it at `at`. */
  event(e: NewEvent<RelayEvent>, at: Date, actor = 'system'): StoredRelayEvent {
    this.seq++;
    const stored = {
      seq: this.seq,
      id: `e${this.seq}`,
      at: at.toISOString(),
      type: e.type,
      actor: e.actor ?? actor,
      data: e.data,
      v: 1,
      prev: '',
      hash: '',
    } as StoredEvent;
    this.models.apply(stored);
    this.log.push(stored as StoredRelayEvent);
    return stored as StoredRelayEvent;
  }

  /** Runs a decision against the current models at `now` and applies what it returns. */
  when(decide: (m: ReadModels, now: Date) => readonly NewEvent<RelayEvent>[], now: Date): StoredRelayEvent[] {
    return decide(this.models, now).map((e) => this.event(e, now));
  }
}

export const at = (base: Date, seconds: number): Date => new Date(base.getTime() + seconds * 1000);
