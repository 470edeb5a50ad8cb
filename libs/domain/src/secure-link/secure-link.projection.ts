import type { Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';

type State = {
  status: 'disabled' | 'available' | 'unavailable';
  url: string | null;
  pin: string | null;
  notAfter: string | null;
  reason: string | null;
  previousPin: string | null;
  changedAt: number | null;
  reach: { state: 'disabled' | 'connected' | 'lost' | 'unavailable'; at: number | null; error: string | null };
};

/**
 * Secure Link as the log tells it: whether it runs in this run (reset at `relay.started`), the pin it
 * serves, and the last identity change (durable: phones paired before it must re-pair).
 */
export class SecureLinkProjection implements Projection<State> {
  private s: State = {
    status: 'disabled',
    url: null,
    pin: null,
    notAfter: null,
    reason: null,
    previousPin: null,
    changedAt: null,
    reach: { state: 'disabled', at: null, error: null },
  };

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.s = { ...this.s, status: 'disabled', url: null, reason: null, reach: { state: 'disabled', at: null, error: null } };
        break;
      case 'secure_link.reach_changed':
        this.s = { ...this.s, reach: { state: e.data.state, at: eventAtMs(e), error: e.data.error } };
        break;
      case 'secure_link.started':
        this.s = { ...this.s, status: 'available', url: e.data.url, pin: e.data.pin, notAfter: e.data.notAfter, reason: null };
        break;
      case 'secure_link.identity_changed':
        this.s = { ...this.s, previousPin: e.data.previousPin, changedAt: eventAtMs(e) };
        break;
      case 'secure_link.unavailable':
        this.s = { ...this.s, status: 'unavailable', url: null, reason: e.data.reason };
        break;
      default:
        break;
    }
  }

  get state(): DeepReadonly<State> {
    return this.s;
  }

  /** The pin last served in any run (what a paired phone holds), or null. */
  get lastPin(): string | null {
    return this.s.pin;
  }

  snapshot(): State {
    return { ...this.s };
  }

  restore(s: State): void {
    this.s = { ...s, reach: s.reach ?? { state: 'disabled', at: null, error: null } };
  }
}
