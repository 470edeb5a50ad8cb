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

/** RELAY_RECONNECT_BURST and RELAY_RECONNECTS_PER_MINUTE: a device's authenticated connects. */
export type ReconnectBudgetOptions = { burst: number; perMinute: number };

/**
 * The default: a phone that changes networks, sleeps and wakes reconnects a few times a minute at most; a
 * loop that reconnects as fast as it can (519 in 8 s, issue 34) writes a connect and a disconnect each. Past
 * 20 at once and 6 a minute it is refused before anything is written: about 12 events a minute, not 3 a reconnect.
 */
export const DEFAULT_RECONNECT_BUDGET: ReconnectBudgetOptions = { burst: 20, perMinute: 6 };

/**
 * The backstop on what one paired device can write to the log: every decision made for a `device:`
 * actor spends one token per event from that device's bucket (`burst`, refilled at `perSecond`), and a
 * decision that would overdraw it writes nothing and is refused with 429 `relay.event_budget` (a socket
 * frame: its channel's error). So no sequence of frames or requests (alternating subscribe/unsubscribe,
 * attach/detach, notification bursts...) grows the log faster than `perSecond` events a second per
 * device. Events that end, shrink or protect (`writtenWhileLow`: revocations, disconnects, calls coming
 * to their end, failed auths) are never refused and cost nothing.
 *
 * A socket's connect (`phone.connected`) spends one from its device's reconnect bucket instead (keyed by the
 * device id, else the session, whoever decided it: a renewal is decided before the device is known), so a
 * device that reconnects in a loop, renewing or not, is refused with `relay.reconnect_budget` and writes
 * nothing. A pairing's connect is not counted: the operator's code bounds those.
 *
 * Flow control, not a rule: the buckets are not recorded; they refill by the injected clock (so a test's
 * manual clock decides when a flooder earns tokens back).
 */
export class EventBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly reconnects: EventBudgetOptions;

  constructor(
    private readonly nowMs: () => number,
    private readonly opts: EventBudgetOptions = DEFAULT_EVENT_BUDGET,
    private readonly deviceControl: EventBudgetOptions = DEVICE_CONTROL_BUDGET,
    reconnects: ReconnectBudgetOptions = DEFAULT_RECONNECT_BUDGET,
  ) {
    this.reconnects = { burst: reconnects.burst, perSecond: reconnects.perMinute / 60 };
  }

  admit(events: readonly NewEvent[], actor: string): void {
    const device = actor.startsWith('device:');
    let cost = 0;
    let commands = 0;
    for (const e of events) {
      // A connect spends from the reconnect bucket instead (below).
      if (!device || writtenWhileLow(e) || e.type === 'phone.connected') continue;
      if (DEVICE_CONTROL_EVENTS.has(e.type)) commands++;
      else cost++;
    }
    const connect = this.connectOf(events);
    if (cost === 0 && commands === 0 && connect === null) return;
    const now = this.nowMs();
    // Every bucket is checked before any is spent: a refused decision costs nothing.
    const general = cost > 0 ? this.refill(actor, this.opts, now) : null;
    const control = commands > 0 ? this.refill(`control:${actor}`, this.deviceControl, now) : null;
    const reconnect = connect !== null ? this.refill(`reconnect:${connect}`, this.reconnects, now) : null;
    if (general && general.tokens < cost) this.refuse(general, cost, this.opts, 'is changing state faster than the relay records');
    if (control && control.tokens < commands)
      this.refuse(control, commands, this.deviceControl, 'is sent Device Control commands faster than the relay records');
    if (reconnect && reconnect.tokens < 1) this.refuseReconnect(reconnect);
    if (general) general.tokens -= cost;
    if (control) control.tokens -= commands;
    if (reconnect) reconnect.tokens -= 1;
    if (this.buckets.size > 10_000) this.prune(now);
  }

  /** The device whose socket this decision connects (its id, else its session), unless the decision pairs it. */
  private connectOf(events: readonly NewEvent[]): string | null {
    let key: string | null = null;
    for (const e of events) {
      if (e.type === 'pairing.code_consumed') return null;
      if (e.type === 'phone.connected') {
        const d = e.data as { deviceId: string; tokenPrefix: string };
        key = d.deviceId !== '' ? `id:${d.deviceId}` : `session:${d.tokenPrefix}`;
      }
    }
    return key;
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

  private refuseReconnect(b: { tokens: number }): never {
    const { burst, perSecond } = this.reconnects;
    const wait = Math.max(1, Math.ceil((1 - b.tokens) / perSecond));
    throw new DomainError(
      'relay.reconnect_budget',
      'rate_limited',
      `this device reconnects faster than the relay records (at most ${burst} at once, then ${Math.round(perSecond * 60)} a minute); try again in ${wait} s`,
      { retry_after: wait },
    );
  }

  /** Full buckets carry no information: dropped when many devices have been seen. */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) {
      const opts = k.startsWith('control:') ? this.deviceControl : k.startsWith('reconnect:') ? this.reconnects : this.opts;
      if (b.tokens + ((now - b.at) / 1000) * opts.perSecond >= opts.burst) this.buckets.delete(k);
    }
  }
}
