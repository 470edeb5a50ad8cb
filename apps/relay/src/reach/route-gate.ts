import type { HostStream } from './host-stream';

/** How long a revoke waits for the route's streams to end: a phone that does not answer the close frame. */
export const SETTLE_MS = 5_000;
/** How long a revoke waits for an auth in flight on the route to write its `auth.ok` (the auth deadline is 30 s). */
export const HOLD_MS = 30_000;

/**
 * Which streams ride which route credential, and when the broker may be told to revoke one.
 *
 * The broker closes a revoked route's streams at once, and whatever the relay wrote to them just before
 * went with them: a revoked phone saw a network drop (1006) instead of `session.revoked` and 4403, and a
 * phone that re-paired over the route its pairing replaced never got its `auth.ok` (its pairing was then
 * abandoned). So a revoke waits for the auths in flight on the route to write their answer, then (bounded)
 * for the route's streams to end (the relay's side ends once the phone answered its close), sends what they
 * still gather, and only then goes to the broker; meanwhile the route opens no new stream here.
 */
export class RouteGate {
  private readonly streams = new Map<string, Set<HostStream>>();
  private readonly holds = new Map<string, Set<Promise<void>>>();
  private readonly closing = new Set<string>();

  constructor(private readonly bounds: { settleMs: number; holdMs: number } = { settleMs: SETTLE_MS, holdMs: HOLD_MS }) {}

  /** Whether a new stream may ride this route (not while its revoke is on its way). */
  admits(routeId: string): boolean {
    return !this.closing.has(routeId);
  }

  track(s: HostStream): void {
    const id = s.routeId;
    if (id === null) return;
    const set = this.streams.get(id) ?? new Set<HostStream>();
    this.streams.set(id, set);
    set.add(s);
    void s.ended.then(() => {
      set.delete(s);
      if (set.size === 0 && this.streams.get(id) === set) this.streams.delete(id);
    });
  }

  /** Holds the route's revoke until the returned function runs (at most `holdMs`). */
  hold(routeId: string): () => void {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const set = this.holds.get(routeId) ?? new Set<Promise<void>>();
    this.holds.set(routeId, set);
    set.add(held);
    void held.then(() => {
      set.delete(held);
      if (set.size === 0 && this.holds.get(routeId) === set) this.holds.delete(routeId);
    });
    return release;
  }

  /** The route stops opening streams; resolves when the broker may revoke it (see the class comment). */
  async settle(routeId: string): Promise<void> {
    this.closing.add(routeId);
    await within(Promise.all([...(this.holds.get(routeId) ?? [])]), this.bounds.holdMs);
    await within(Promise.all([...(this.streams.get(routeId) ?? [])].map((s) => s.ended)), this.bounds.settleMs);
    for (const s of this.streams.get(routeId) ?? []) s.flush();
  }

  /** The broker revoked it: nothing of it is left to refuse here. */
  revoked(routeId: string): void {
    this.closing.delete(routeId);
  }
}

function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((r) => {
    timer = setTimeout(r, ms);
    timer.unref();
  });
  return Promise.race([p.then(() => undefined), late]).finally(() => clearTimeout(timer));
}
