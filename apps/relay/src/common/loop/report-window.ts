/**
 * At most one write per window for each (connection, kind) of report a client restates (a desktop's
 * status, its workspace, a phone's bridge status): the first report of a quiet period is written at
 * once; those that arrive within `windowMs` after it only replace one another, and the latest is written
 * when the window ends (which opens the next window). However fast a client repeats itself, its
 * reports cost at most one decision (and so at most one event) per window per kind, and the state
 * recorded is never more than one window behind what it last said.
 *
 * Memory: one timer and one pending thunk per (connection, kind); `drop(connId)` when the socket closes.
 */
export class ReportWindow {
  private readonly slots = new Map<string, Map<string, Slot>>();

  constructor(
    private readonly windowMs: number,
    /** A write that ran at a window's end failed (nobody awaits it). */
    private readonly onLateError: (err: Error, connId: string, kind: string) => void,
  ) {}

  /**
   * Writes now (the returned promise is the write's: a refusal reaches the caller) when no window is
   * open for this connection and kind; otherwise keeps `write` as the latest, to run when the window ends.
   * `urgent` (a report that takes something away, which must not wait) writes now in any case and
   * stands as the latest: what was pending is dropped, and the window goes on.
   */
  submit(connId: string, kind: string, write: () => Promise<unknown>, urgent = false): Promise<void> {
    let kinds = this.slots.get(connId);
    const slot = kinds?.get(kind);
    if (slot) {
      slot.pending = urgent ? null : write;
      return urgent ? write().then(() => undefined) : Promise.resolve();
    }
    if (!kinds) this.slots.set(connId, (kinds = new Map()));
    this.open(connId, kinds, kind);
    return write().then(() => undefined);
  }

  /** Windows open now (tests, metrics). */
  get openWindows(): number {
    let n = 0;
    for (const kinds of this.slots.values()) n += kinds.size;
    return n;
  }

  /** The connection closed: what it said last and was not written yet is dropped with it. */
  drop(connId: string): void {
    const kinds = this.slots.get(connId);
    if (!kinds) return;
    for (const slot of kinds.values()) clearTimeout(slot.timer);
    this.slots.delete(connId);
  }

  dropAll(): void {
    for (const connId of [...this.slots.keys()]) this.drop(connId);
  }

  private open(connId: string, kinds: Map<string, Slot>, kind: string): void {
    const slot: Slot = { pending: null, timer: setTimeout(() => this.close(connId, kind), this.windowMs) };
    slot.timer.unref();
    kinds.set(kind, slot);
  }

  private close(connId: string, kind: string): void {
    const kinds = this.slots.get(connId);
    const slot = kinds?.get(kind);
    if (!kinds || !slot) return;
    kinds.delete(kind);
    if (!slot.pending) {
      if (kinds.size === 0) this.slots.delete(connId);
      return;
    }
    this.open(connId, kinds, kind);
    slot.pending().catch((err: Error) => this.onLateError(err, connId, kind));
  }
}

type Slot = { pending: (() => Promise<unknown>) | null; timer: NodeJS.Timeout };
