/**
 * A fixed-size ring of metric samples, stored by column: one Float64Array of `capacity` times and one per
 * series key, allocated when the key is first seen and never grown. A key past `maxKeys` is refused (the
 * caller folds it into an "other" key it registered first), so the memory is at most
 * `(maxKeys + 1) × capacity × 8` bytes, whatever the relay serves. NaN is "no value at this sample".
 */
export class SampleRing {
  private readonly times: Float64Array;
  private readonly columns = new Map<string, Float64Array>();
  private head = 0;
  private size = 0;

  /** `reserved`: keys given their column now, so later keys can never crowd them out. */
  constructor(
    readonly capacity: number,
    readonly maxKeys: number,
    reserved: readonly string[] = [],
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity: a whole number >= 1');
    if (reserved.length > maxKeys) throw new RangeError('more reserved keys than maxKeys');
    this.times = new Float64Array(capacity);
    for (const k of reserved) this.columns.set(k, new Float64Array(capacity).fill(NaN));
  }

  get length(): number {
    return this.size;
  }

  has(key: string): boolean {
    return this.columns.has(key);
  }

  /** How many more keys can be given a column. */
  get room(): number {
    return this.maxKeys - this.columns.size;
  }

  /** Appends a sample at `t` (epoch ms); the oldest one goes when the ring is full. Unknown keys past the cap are dropped. */
  push(t: number, values: ReadonlyMap<string, number | null>): void {
    const at = this.head;
    this.times[at] = t;
    for (const column of this.columns.values()) column[at] = NaN;
    for (const [key, v] of values) {
      let column = this.columns.get(key);
      if (!column) {
        if (this.columns.size >= this.maxKeys) continue;
        column = new Float64Array(this.capacity).fill(NaN);
        this.columns.set(key, column);
      }
      column[at] = v ?? NaN;
    }
    this.head = (this.head + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }

  /** Sample times, oldest first (epoch ms). */
  timeline(): number[] {
    return this.ordered(this.times);
  }

  keys(): string[] {
    return [...this.columns.keys()];
  }

  /** A key's values aligned with `timeline()`, null where the sample had none. */
  values(key: string): Array<number | null> {
    const column = this.columns.get(key);
    if (!column) return new Array<null>(this.size).fill(null);
    return this.ordered(column).map((v) => (Number.isNaN(v) ? null : v));
  }

  private ordered(column: Float64Array): number[] {
    const start = (this.head - this.size + this.capacity) % this.capacity;
    const out = new Array<number>(this.size);
    for (let i = 0; i < this.size; i++) out[i] = column[(start + i) % this.capacity];
    return out;
  }
}
