import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { AuthKind, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

export type RateLimitPolicy = Readonly<Record<AuthKind, { failures: number; windowSeconds: number; blockSeconds: number }>>;

/** WIRE.md: 10 bad codes in 60 s block 120 s; 5 bad tokens in 60 s block 300 s. */
export const DEFAULT_RATE_LIMIT: RateLimitPolicy = {
  code: { failures: 10, windowSeconds: 60, blockSeconds: 120 },
  token: { failures: 5, windowSeconds: 60, blockSeconds: 300 },
};

/** A block in force: when its `ratelimit.blocked` was written (`since`, event time) and when it ends. */
type Block = { until: number; kind: AuthKind; since: number };

type State = {
  failures: Array<[string, number[]]>;
  blocks: Array<[string, Block]>;
  /** Event time of the last sweep of stale entries (in the snapshot, so replays sweep at the same events). */
  prunedAt?: number;
};

/**
 * Who a limit applies to: an IPv4 address, or the /64 an IPv6 address belongs to (one subscriber line
 * gets a whole /64, so keying single IPv6 addresses would let one client rotate past every limit).
 * A peer one of the relay's forwarders vouches for keeps its qualifier (`127.0.0.1 via secure-link`,
 * `2001:db8::1 via ingress`, `route:<id> via reach`): the address part is grouped the same way.
 * Events keep the real address; only the limiter groups them.
 */
export function rateLimitSubject(ip: string): string {
  const via = / via [a-z-]{1,16}$/.exec(ip);
  if (via) return `${rateLimitSubject(ip.slice(0, via.index))}${via[0]}`;
  // Only what looks like an IPv6 address is grouped (a Reach credential id has a `:` too, and keeps its case).
  if (!ip.includes(':') || !/^[\da-f:.]+(?:%\S*)?$/i.test(ip)) return ip;
  const bare = ip.split('%')[0].toLowerCase();
  const halves = bare.split('::');
  if (halves.length > 2) return bare;
  // An embedded IPv4 tail (`::ffff:1.2.3.4`, `64:ff9b::1.2.3.4`) stands for two groups.
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const zeros = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array<string>(Math.max(0, zeros)).fill('0'), ...tail];
  if (all.length !== 8 || zeros < 0 || !all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return bare;
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

const key = (ip: string, kind: AuthKind): string => `${kind} ${rateLimitSubject(ip)}`;
const MAX_WINDOW_MS = 600_000;
/** The newest failures kept per subject: far above any threshold (WIRE.md's are 5 and 10). */
const MAX_FAILURES_KEPT = 64;
/** Stale entries (no failure within MAX_WINDOW_MS, blocks that ended) are swept at most this often. */
const PRUNE_EVERY_MS = 60_000;

/** Recent auth failures per IP and kind, and the blocks they caused. */
export class RateLimitProjection implements Projection<State> {
  private readonly failures = new Map<string, number[]>();
  private readonly blocks = new Map<string, Block>();
  private prunedAt = 0;

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'auth.failed': {
        const at = eventAtMs(e);
        this.prune(at);
        const k = key(e.data.ip, e.data.kind);
        const list = (this.failures.get(k) ?? []).filter((t) => at - t < MAX_WINDOW_MS);
        list.push(at);
        // Only counts up to a threshold matter; a log with a flood of failures must not make replay quadratic.
        if (list.length > MAX_FAILURES_KEPT) list.splice(0, list.length - MAX_FAILURES_KEPT);
        this.failures.set(k, list);
        break;
      }
      case 'ratelimit.blocked': {
        const at = eventAtMs(e);
        this.prune(at);
        this.blocks.set(rateLimitSubject(e.data.ip), { until: isoMs(e.data.until), kind: e.data.kind, since: at });
        this.failures.delete(key(e.data.ip, e.data.kind));
        break;
      }
      case 'ratelimit.cleared':
        if (e.data.ip === null) {
          this.blocks.clear();
          this.failures.clear();
        } else {
          this.blocks.delete(rateLimitSubject(e.data.ip));
          this.failures.delete(key(e.data.ip, 'code'));
          this.failures.delete(key(e.data.ip, 'token'));
        }
        break;
      default:
        break;
    }
  }

  /**
   * Forgets addresses with no failure in the longest window and blocks that have ended, at most once a
   * minute of event time. Only ever driven by event times, so a replay keeps exactly the same entries.
   */
  private prune(at: number): void {
    if (at - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = at;
    for (const [k, list] of this.failures) if (list.length === 0 || at - list[list.length - 1] >= MAX_WINDOW_MS) this.failures.delete(k);
    for (const [subject, b] of this.blocks) if (b.until <= at) this.blocks.delete(subject);
  }

  /** Tracked subjects (failure lists and blocks): what the sweep keeps bounded. */
  get size(): Readonly<{ failures: number; blocks: number }> {
    return { failures: this.failures.size, blocks: this.blocks.size };
  }

  failuresWithin(ip: string, kind: AuthKind, now: Date, windowSeconds: number): number {
    const t = now.getTime();
    return (this.failures.get(key(ip, kind)) ?? []).filter((at) => t - at < windowSeconds * 1000).length;
  }

  /** The block in force for `ip` at `now`, if any. */
  blockedUntil(ip: string, now: Date): number | null {
    const b = this.blocks.get(rateLimitSubject(ip));
    return b && b.until > now.getTime() ? b.until : null;
  }

  /** Blocks in force; `ip` is the subject: an IPv4 address or an IPv6 /64 (with a forwarder's qualifier). */
  activeBlocks(now: Date): ReadonlyArray<Readonly<{ ip: string } & Block>> {
    return [...this.blocks.entries()].filter(([, b]) => b.until > now.getTime()).map(([ip, b]) => ({ ip, ...b }));
  }

  snapshot(): State {
    return { failures: [...this.failures.entries()], blocks: [...this.blocks.entries()], prunedAt: this.prunedAt };
  }

  restore(state: State): void {
    this.failures.clear();
    this.blocks.clear();
    for (const [k, v] of state.failures) this.failures.set(k, v);
    for (const [k, v] of state.blocks) this.blocks.set(k, v);
    this.prunedAt = state.prunedAt ?? 0;
  }
}
