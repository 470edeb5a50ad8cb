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
 * Device Control commands (`bridge.command_sent` and the safety step that let it through, two events a
 * command) spend from a bucket of their own: an agent drives the phone with the phone's own token, and
 * the default bucket held it to 150 commands, then 2.5 a second. This one allows 600 commands at once,
 * then 20 a second (about 12 KB of log a second at most).
 */
export const DEVICE_CONTROL_BUDGET: EventBudgetOptions = { burst: 1200, perSecond: 40 };

const DEVICE_CONTROL_EVENTS: ReadonlySet<string> = new Set(['bridge.command_sent', 'bridge.safety_decided']);

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
    private readonly deviceControl: EventBudgetOptions = DEVICE_CONTROL_BUDGET,
  ) {}

  admit(events: readonly NewEvent[], actor: string): void {
    if (!actor.startsWith('device:')) return;
    let cost = 0;
    let commands = 0;
    for (const e of events) {
      if (writtenWhileLow(e)) continue;
      if (DEVICE_CONTROL_EVENTS.has(e.type)) commands++;
      else cost++;
    }
    if (cost === 0 && commands === 0) return;
    const now = this.nowMs();
    // Both buckets are checked before either is spent: a refused decision costs nothing.
    const general = cost > 0 ? this.refill(actor, this.opts, now) : null;
    const control = commands > 0 ? this.refill(`control:${actor}`, this.deviceControl, now) : null;
    if (general && general.tokens < cost) this.refuse(general, cost, this.opts, 'is changing state faster than the relay records');
    if (control && control.tokens < commands)
      this.refuse(control, commands, this.deviceControl, 'is sent Device Control commands faster than the relay records');
    if (general) general.tokens -= cost;
    if (control) control.tokens -= commands;
    if (this.buckets.size > 10_000) this.prune(now);
  }

  private refill(key: string, opts: EventBudgetOptions, now: number): { tokens: number; at: number } {
    const b = this.buckets.get(key) ?? { tokens: opts.burst, at: now };
    b.tokens = Math.min(opts.burst, b.tokens + ((now - b.at) / 1000) * opts.perSecond);
    b.at = now;
    this.buckets.set(key, b);
    return b;
  }

  private refuse(b: { tokens: number }, cost: number, opts: EventBudgetOptions, what: string): never {
    const wait = Math.ceil((cost - b.tokens) / opts.perSecond);
    throw new DomainError(
      'relay.event_budget',
      'rate_limited',
      `this device ${what} (at most ${opts.perSecond} events a second, ${opts.burst} at once); try again in ${wait} s`,
      { retry_after: wait },
    );
  }

  /** Full buckets carry no information: dropped when many devices have been seen. */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) {
      const opts = k.startsWith('control:') ? this.deviceControl : this.opts;
      if (b.tokens + ((now - b.at) / 1000) * opts.perSecond >= opts.burst) this.buckets.delete(k);
    }
  }
}
