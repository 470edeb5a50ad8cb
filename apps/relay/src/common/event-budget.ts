import { DomainError } from '@svc/domain';
import type { NewEvent } from '@svc/events';
import { writtenWhileLow } from './disk-guard';

export type EventBudgetOptions = {
  /** Events a device may have written in one burst. */
  burst: number;
  /** Events a second a device earns back, up to `burst`. */
  perSecond: number;
};

/** The default: far above any client's pace (restated reports are coalesced before they get here), a ceiling for a hostile one. */
export const DEFAULT_EVENT_BUDGET: EventBudgetOptions = { burst: 300, perSecond: 5 };

/**
 * The backstop on what one paired device can write to the log: every decision made for a `device:`
 * actor spends one token per event from that device's bucket (`burst`, refilled at `perSecond`), and a
 * decision that would overdraw it writes nothing and is refused with 429 `relay.event_budget` (a socket
 * frame: its channel's error). So no sequence of frames or requests (alternating subscribe/unsubscribe,
 * attach/detach, notification bursts...) grows the log faster than `perSecond` events a second per
 * device. Events that end, shrink or protect (`writtenWhileLow`: revocations, disconnects, calls coming
 * to their end, failed auths, a reconnect's bookkeeping) are never refused and cost nothing.
 *
 * Flow control, not a rule: the buckets are not recorded; they refill by the injected clock (so a test's
 * manual clock decides when a flooder earns tokens back).
 */
export class EventBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly nowMs: () => number,
    private readonly opts: EventBudgetOptions = DEFAULT_EVENT_BUDGET,
  ) {}

  admit(events: readonly NewEvent[], actor: string): void {
    if (!actor.startsWith('device:')) return;
    const cost = events.filter((e) => !writtenWhileLow(e)).length;
    if (cost === 0) return;
    const now = this.nowMs();
    const b = this.buckets.get(actor) ?? { tokens: this.opts.burst, at: now };
    b.tokens = Math.min(this.opts.burst, b.tokens + ((now - b.at) / 1000) * this.opts.perSecond);
    b.at = now;
    if (b.tokens < cost) {
      this.buckets.set(actor, b);
      const wait = Math.ceil((cost - b.tokens) / this.opts.perSecond);
      throw new DomainError(
        'relay.event_budget',
        'rate_limited',
        `this device is changing state faster than the relay records (at most ${this.opts.perSecond} events a second, ${this.opts.burst} at once); try again in ${wait} s`,
        { retry_after: wait },
      );
    }
    b.tokens -= cost;
    this.buckets.set(actor, b);
    if (this.buckets.size > 10_000) this.prune(now);
  }

  /** Full buckets carry no information: dropped when many devices have been seen. */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * this.opts.perSecond >= this.opts.burst) this.buckets.delete(k);
  }
}
