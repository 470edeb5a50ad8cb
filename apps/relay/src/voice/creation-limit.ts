/**
 * Token buckets by key (a caller): `perMinute` tokens a minute, at most `burst` saved up. State lives in
 * memory on purpose: a refusal changes nothing worth recording, a restart forgiving a caller's recent
 * creations costs at most one burst, and each creation it lets through is an event anyway.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly burst: number,
  ) {}

  /** Takes a token for `key` at `nowMs`: 0 when taken, else the whole seconds until one is there (nothing taken). */
  take(key: string, nowMs: number): number {
    const rate = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: nowMs };
    const tokens = Math.min(this.burst, b.tokens + Math.max(0, nowMs - b.at) * rate);
    if (tokens >= 1) {
      this.buckets.set(key, { tokens: tokens - 1, at: nowMs });
      this.forgetFull(nowMs);
      return 0;
    }
    this.buckets.set(key, { tokens, at: nowMs });
    return Math.max(1, Math.ceil((1 - tokens) / rate / 1000));
  }

  /** Buckets that have refilled are the same as none: dropped, so the map holds only recent callers. */
  private forgetFull(nowMs: number): void {
    if (this.buckets.size < 1024) return;
    const rate = this.perMinute / 60_000;
    for (const [k, b] of this.buckets) if (b.tokens + (nowMs - b.at) * rate >= this.burst) this.buckets.delete(k);
  }
}
