import type { StoredEvent } from './event';

/** A read model fed by events. `apply` must be deterministic: the same log gives the same state. */
export interface Projection<S = unknown> {
  apply(event: StoredEvent): void;
  snapshot(): S;
  restore(state: S): void;
}
