/** What the space needs of the recordings it bounds. */
export type RecordingSpaceDeps = {
  /** RELAY_TERMINAL_RECORDINGS_TOTAL_MB in bytes. */
  totalBytes: () => number;
  /** Bytes of the saved recordings (the log's sizes). */
  savedBytes: () => number;
  /** Removes the oldest saved recording (its file, then its event): false when none is left or it could not be. */
  removeOldest: () => Promise<boolean>;
};

/**
 * The total cap over every recording, live ones included: a live recording claims each chunk here before
 * the chunk reaches its file, so the bytes on disk never pass the cap (issue 34: four live shells had left
 * four times the cap). Past it the oldest saved recordings go first; when only live ones are left the
 * claim is refused and that recording stops. Claims and removals run one at a time, so two recordings
 * never both take the last free bytes. A live recording's claim is released when its saved event is
 * applied (its bytes are then counted as saved) or when it is dropped.
 */
export class RecordingSpace {
  private readonly live = new Map<string, number>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: RecordingSpaceDeps) {}

  /** Resolves true once `bytes` more of recording `id` fit (older saved ones removed if need be), false if they cannot. */
  claim(id: string, bytes: number): Promise<boolean> {
    return this.exclusive(async () => {
      if (!(await this.fit(bytes))) return false;
      this.live.set(id, (this.live.get(id) ?? 0) + bytes);
      return true;
    });
  }

  /** Recording `id` no longer counts as live: saved (the log counts it now) or gone. */
  release(id: string): void {
    this.live.delete(id);
  }

  /** Oldest saved out until everything fits (after a save; at start, under a lowered cap). */
  trim(): Promise<void> {
    return this.exclusive(async () => void (await this.fit(0)));
  }

  liveBytes(): number {
    let n = 0;
    for (const b of this.live.values()) n += b;
    return n;
  }

  private async fit(bytes: number): Promise<boolean> {
    while (this.deps.savedBytes() + this.liveBytes() + bytes > this.deps.totalBytes()) {
      if (!(await this.deps.removeOldest())) return false;
    }
    return true;
  }

  /** Runs `job` in turn with the claims and removals (a removal for another reason, say). Never call it from a job. */
  exclusive<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(job, job);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
