import { eventAtMs } from '../event-time';
import type { AuthKind, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

export type RateLimitPolicy = Readonly<Record<AuthKind, { failures: number; windowSeconds: number; blockSeconds: number }>>;

/** WIRE.md: 10 bad codes in 60 s block 120 s; 5 bad tokens in 60 s block 300 s. */
export const DEFAULT_RATE_LIMIT: RateLimitPolicy = {
  code: { failures: 10, windowSeconds: 60, blockSeconds: 120 },
  token: { failures: 5, windowSeconds: 60, blockSeconds: 300 },
};

type State = { failures: Array<[string, number[]]>; blocks: Array<[string, { until: number; kind: AuthKind }]> };

const key = (ip: string, kind: AuthKind): string => `${kind} ${ip}`;
const MAX_WINDOW_MS = 600_000;

/** Recent auth failures per IP and kind, and the blocks they caused. */
export class RateLimitProjection implements Projection<State> {
  private readonly failures = new Map<string, number[]>();
  private readonly blocks = new Map<string, { until: number; kind: AuthKind }>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'auth.failed': {
        const at = eventAtMs(e);
        const k = key(e.data.ip, e.data.kind);
        const list = (this.failures.get(k) ?? []).filter((t) => at - t < MAX_WINDOW_MS);
        list.push(at);
        this.failures.set(k, list);
        break;
      }
      case 'ratelimit.blocked':
        this.blocks.set(e.data.ip, { until: Date.parse(e.data.until), kind: e.data.kind });
        this.failures.delete(key(e.data.ip, e.data.kind));
        break;
      case 'ratelimit.cleared':
        if (e.data.ip === null) {
          this.blocks.clear();
          this.failures.clear();
        } else {
          this.blocks.delete(e.data.ip);
          this.failures.delete(key(e.data.ip, 'code'));
          this.failures.delete(key(e.data.ip, 'token'));
        }
        break;
      default:
        break;
    }
  }

  failuresWithin(ip: string, kind: AuthKind, now: Date, windowSeconds: number): number {
    const t = now.getTime();
    return (this.failures.get(key(ip, kind)) ?? []).filter((at) => t - at < windowSeconds * 1000).length;
  }

  /** The block in force for `ip` at `now`, if any. */
  blockedUntil(ip: string, now: Date): number | null {
    const b = this.blocks.get(ip);
    return b && b.until > now.getTime() ? b.until : null;
  }

  activeBlocks(now: Date): Array<{ ip: string; until: number; kind: AuthKind }> {
    return [...this.blocks.entries()].filter(([, b]) => b.until > now.getTime()).map(([ip, b]) => ({ ip, ...b }));
  }

  snapshot(): State {
    return { failures: [...this.failures.entries()], blocks: [...this.blocks.entries()] };
  }

  restore(state: State): void {
    this.failures.clear();
    this.blocks.clear();
    for (const [k, v] of state.failures) this.failures.set(k, v);
    for (const [k, v] of state.blocks) this.blocks.set(k, v);
  }
}
