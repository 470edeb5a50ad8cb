import { rateLimitSubject } from '@svc/domain';
import { normalizeIp } from '../common/http/net';

export type AdmissionLimits = {
  /** Refused registrations a minute from one source (registrations still in flight count too). */
  refusalsPerMinute: number;
  /** Refused registrations a minute from all sources together: past it only trusted sources get in. */
  refusalsPerMinuteTotal: number;
  /** Sources tracked at most, for refusals and for trust each (past it the least recent goes). */
  trackedSources: number;
  /** How long a source whose credential matched stays trusted. */
  trustedMs: number;
};

/** What an admitted connection came to: a credential that matched, or anything else (no registration in time, a socket closed first). */
export type Outcome = 'refused' | 'matched';

type Source = { key: string; refusals: number[]; pending: number };
export type Ticket = { readonly source: Source; readonly trusted: boolean; settled: boolean };
export type Admission = { ok: true; ticket: Ticket } | { ok: false; retryAfterS: number; why: 'source' | 'total' };

const WINDOW_MS = 60_000;

/**
 * Who a limit applies to: an IPv4 address (IPv4-mapped ones too, as a dual-stack listener reports them),
 * or the /64 an IPv6 address belongs to (one subscriber line gets a whole /64).
 */
export function sourceOf(address: string | undefined): string {
  return rateLimitSubject(normalizeIp(address));
}

/**
 * Which upgrades the broker takes (docs/PROTOCOL.md, Reach). Only refused registrations count: a phone
 * opens a stream for every HTTP call through Reach, so counting connections would lock out a busy phone,
 * or every phone behind one address. A source past its refusals waits out the minute; past the total, so
 * that many addresses cannot wear the broker down either, only sources whose credential matched lately
 * get in. Every store is bounded and pruned from its oldest end: nothing here walks a whole map.
 */
export class BrokerAdmission {
  /** By source, in order of last activity. */
  private readonly sources = new Map<string, Source>();
  /** Sources whose credential matched, by the time it did, in that order. */
  private readonly trusted = new Map<string, number>();
  private readonly total = new MinuteCount();
  private pendingUntrusted = 0;
  private pending = 0;

  constructor(private readonly limits: AdmissionLimits) {}

  admit(address: string | undefined, now: number): Admission {
    this.prune(now);
    const key = sourceOf(address);
    const s = this.sources.get(key) ?? { key, refusals: [], pending: 0 };
    while (s.refusals.length > 0 && s.refusals[0] <= now - WINDOW_MS) s.refusals.shift();
    if (s.refusals.length + s.pending >= this.limits.refusalsPerMinute)
      return { ok: false, why: 'source', retryAfterS: s.refusals.length > 0 ? Math.max(1, Math.ceil((s.refusals[0] + WINDOW_MS - now) / 1000)) : 1 };
    const trusted = this.trusted.has(key);
    if (!trusted && this.total.sum(now) + this.pendingUntrusted >= this.limits.refusalsPerMinuteTotal)
      return { ok: false, why: 'total', retryAfterS: this.total.retryAfterS(now) };
    s.pending++;
    this.pending++;
    if (!trusted) this.pendingUntrusted++;
    this.touch(s);
    return { ok: true, ticket: { source: s, trusted, settled: false } };
  }

  /** Once per admitted socket; later calls do nothing. */
  settle(ticket: Ticket, outcome: Outcome, now: number): void {
    if (ticket.settled) return;
    ticket.settled = true;
    const s = ticket.source;
    s.pending--;
    this.pending--;
    if (!ticket.trusted) this.pendingUntrusted--;
    if (outcome === 'refused') {
      s.refusals.push(now);
      if (s.refusals.length > this.limits.refusalsPerMinute) s.refusals.shift();
      this.total.add(now);
      this.touch(s);
    } else if (outcome === 'matched') {
      this.trusted.delete(s.key);
      this.trusted.set(s.key, now);
      if (this.trusted.size > this.limits.trackedSources) this.trusted.delete(this.trusted.keys().next().value as string);
    }
  }

  /** What it holds: sources tracked, sources trusted, connections admitted and not yet settled. */
  sizes(): { refusingSources: number; trustedSources: number; inFlight: number } {
    return { refusingSources: this.sources.size, trustedSources: this.trusted.size, inFlight: this.pending };
  }

  private touch(s: Source): void {
    this.sources.delete(s.key);
    this.sources.set(s.key, s);
    if (this.sources.size > this.limits.trackedSources) this.sources.delete(this.sources.keys().next().value as string);
  }

  private prune(now: number): void {
    for (const s of this.sources.values()) {
      if (s.pending > 0 || (s.refusals.length > 0 && s.refusals[s.refusals.length - 1] > now - WINDOW_MS)) break;
      this.sources.delete(s.key);
    }
    for (const [key, at] of this.trusted) {
      if (at > now - this.limits.trustedMs) break;
      this.trusted.delete(key);
    }
  }
}

/** Events in the last minute, in one-second buckets: fixed memory, however many arrive. */
class MinuteCount {
  private readonly counts = new Array<number>(60).fill(0);
  private readonly seconds = new Array<number>(60).fill(-Infinity);

  add(now: number): void {
    const sec = Math.floor(now / 1000);
    const i = sec % 60;
    if (this.seconds[i] !== sec) {
      this.seconds[i] = sec;
      this.counts[i] = 0;
    }
    this.counts[i]++;
  }

  sum(now: number): number {
    const sec = Math.floor(now / 1000);
    let n = 0;
    for (let i = 0; i < 60; i++) if (sec - this.seconds[i] < 60) n += this.counts[i];
    return n;
  }

  /** Seconds until the oldest bucket still counted leaves the minute. */
  retryAfterS(now: number): number {
    const sec = Math.floor(now / 1000);
    let oldest = sec;
    for (let i = 0; i < 60; i++) if (this.counts[i] > 0 && sec - this.seconds[i] < 60) oldest = Math.min(oldest, this.seconds[i]);
    return Math.max(1, oldest + 60 - sec);
  }
}
