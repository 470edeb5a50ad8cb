/**
 * Ids the broker must recognise for a while (connection ids of matched registrations, digests of used
 * bootstrap credentials), each with the time it may be forgotten. Kept in insertion order, which is
 * expiry order for what the broker adds (a day from when it was added; only a bootstrap credential its
 * host made to last longer is due later, and then merely delays the ids behind it), so forgetting walks
 * only from the oldest end and stops at the first id still due: a lookup or an addition never walks the
 * whole set, however large it is. At most `cap` ids: past it the oldest go first.
 */
export class ExpiringIds {
  private readonly until = new Map<string, number>();

  constructor(private readonly cap: number) {}

  get size(): number {
    return this.until.size;
  }

  has(id: string): boolean {
    return this.until.has(id);
  }

  /** Adds (or moves to the newest end) `id`, kept until `until` (epoch ms). */
  add(id: string, until: number): void {
    this.until.delete(id);
    this.until.set(id, until);
    for (const oldest of this.until.keys()) {
      if (this.until.size <= this.cap) break;
      this.until.delete(oldest);
    }
  }

  /** Forgets the oldest ids whose time has come, up to the first that is still due. */
  prune(now: number): void {
    for (const [id, until] of this.until) {
      if (until > now) break;
      this.until.delete(id);
    }
  }

  entries(): IterableIterator<[string, number]> {
    return this.until.entries();
  }
}
