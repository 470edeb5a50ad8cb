import { createHash } from 'node:crypto';

/**
 * The log as an RFC 6962 / RFC 9162 Merkle tree (RFC 9162 section 2.1): leaf `i` is the record of seq
 * `i + 1` exactly as stored, hashed `SHA-256(0x00 || record)`; an interior node is
 * `SHA-256(0x01 || left || right)`; the tree of n leaves splits at the largest power of two below n.
 *
 * Kept: the hash of every complete, aligned subtree (level k, index j covers leaves [j*2^k, (j+1)*2^k)),
 * one contiguous buffer per level: ~64 bytes per record, an append is O(1) amortized (O(log n) at
 * worst), and any subtree hash a proof needs is one lookup or, on the right edge, O(log n) of them.
 * A pruned log keeps only the compact range at its cut (at most log2(n) hashes): every proof about a
 * later record, and every consistency proof between sizes at or past the cut, needs nothing before it.
 */

export const HASH_BYTES = 32;

export class TreeRangeError extends Error {
  constructor(
    message: string,
    readonly code: 'out_of_range' | 'pruned',
  ) {
    super(message);
    this.name = 'TreeRangeError';
  }
}

const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

/** RFC 9162 2.1.1: MTH({d(0)}) = SHA-256(0x00 || d(0)). */
export function leafHash(record: Buffer | string): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(record).digest();
}

/** RFC 9162 2.1.1: SHA-256(0x01 || MTH(left) || MTH(right)). */
export function nodeHash(left: Buffer, right: Buffer): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/** RFC 9162 2.1.1: the hash of an empty tree is the hash of the empty string. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

/** The largest power of two smaller than n (n > 1): where RFC 9162 2.1.1 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** One level's complete subtrees from index `base` on, 32 bytes each. */
class Level {
  private buf = Buffer.alloc(HASH_BYTES * 64);
  count = 0;
  constructor(readonly base: number) {}

  get(index: number): Buffer | null {
    const at = index - this.base;
    if (at < 0 || at >= this.count) return null;
    return this.buf.subarray(at * HASH_BYTES, (at + 1) * HASH_BYTES);
  }

  push(hash: Buffer): void {
    if ((this.count + 1) * HASH_BYTES > this.buf.length) {
      const grown = Buffer.alloc(this.buf.length * 2);
      this.buf.copy(grown, 0, 0, this.count * HASH_BYTES);
      this.buf = grown;
    }
    hash.copy(this.buf, this.count * HASH_BYTES);
    this.count++;
  }
}

export class MerkleTree {
  private readonly levels: Level[] = [];
  private n = 0;
  /** Leaves before this are pruned: only the compact range at the cut is kept. */
  readonly cut: number;

  /**
   * An empty tree, or one that starts at a pruned cut of `cut` leaves whose compact range is `range`
   * (the hashes of the complete subtrees making up [0, cut), largest first: `compactRange(cut)`).
   */
  constructor(cut = 0, range: readonly Buffer[] = []) {
    if (!Number.isSafeInteger(cut) || cut < 0) throw new TreeRangeError('a cut is a whole number of leaves', 'out_of_range');
    const expected = cut.toString(2).replace(/0/g, '').length;
    if (range.length !== expected || range.some((h) => h.length !== HASH_BYTES))
      throw new TreeRangeError(`the compact range of ${cut} leaves is ${expected} hashes of 32 bytes`, 'out_of_range');
    this.cut = cut;
    // Level k starts at the compact-range node it holds (bit k of cut set), else at the first subtree past the cut.
    for (let k = 0; 2 ** k <= cut; k++) {
      const above = Math.floor(cut / 2 ** k);
      this.levels.push(new Level(above % 2 === 1 ? above - 1 : above));
    }
    let r = 0;
    for (let k = this.levels.length - 1; k >= 0; k--) if (Math.floor(cut / 2 ** k) % 2 === 1) this.levels[k].push(range[r++]);
    if (this.levels.length === 0) this.levels.push(new Level(0));
    this.n = cut;
  }

  get size(): number {
    return this.n;
  }

  /** Appends one record (its stored bytes). */
  appendRecord(record: Buffer | string): void {
    this.appendLeaf(leafHash(record));
  }

  /** Appends one leaf hash: the new leaf, then every subtree it completes. */
  appendLeaf(hash: Buffer): void {
    let index = this.n;
    let k = 0;
    let h = hash;
    this.level(0).push(h);
    while (index % 2 === 1) {
      h = nodeHash(this.levels[k].get(index - 1)!, h);
      index = (index - 1) / 2;
      k++;
      this.level(k).push(h);
    }
    this.n++;
  }

  private level(k: number): Level {
    while (this.levels.length <= k) {
      const j = this.levels.length;
      this.levels.push(new Level(Math.floor(this.cut / 2 ** j)));
    }
    return this.levels[k];
  }

  /** MTH(D[lo:hi]) (RFC 9162 2.1.1), for the ranges the RFC's recursion visits (lo aligned to the split). */
  private range(lo: number, hi: number): Buffer {
    const width = hi - lo;
    const k = Math.log2(width);
    if (Number.isInteger(k) && lo % width === 0) {
      const stored = this.levels[k]?.get(lo / width);
      if (stored) return stored;
      if (lo < this.cut) throw new TreeRangeError(`leaves before ${this.cut} were pruned: that part of the tree is no longer kept`, 'pruned');
    }
    const split = splitPoint(width);
    return nodeHash(this.range(lo, lo + split), this.range(lo + split, hi));
  }

  private checkSize(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.n)
      throw new TreeRangeError(`tree size ${n} is out of range: the tree has ${this.n} leaves`, 'out_of_range');
    if (n > 0 && n < this.cut) throw new TreeRangeError(`tree size ${n} is before the cut at ${this.cut}: those leaves were pruned`, 'pruned');
  }

  /** The root hash of the first n leaves (RFC 9162 2.1.1). */
  root(n = this.n): Buffer {
    this.checkSize(n);
    return n === 0 ? EMPTY_ROOT : this.range(0, n);
  }

  /** The leaf hash of leaf i (null when pruned). */
  leaf(i: number): Buffer | null {
    return this.levels[0].get(i);
  }

  /** The audit path of leaf `m` in the tree of the first `n` leaves, leaf side first (RFC 9162 2.1.3.1 PATH). */
  inclusion(m: number, n = this.n): Buffer[] {
    this.checkSize(n);
    if (!Number.isSafeInteger(m) || m < 0 || m >= n) throw new TreeRangeError(`leaf ${m} is not in a tree of ${n} leaves`, 'out_of_range');
    if (m < this.cut) throw new TreeRangeError(`leaf ${m} is before the cut at ${this.cut}: it was pruned`, 'pruned');
    const path: Buffer[] = [];
    let lo = 0;
    let hi = n;
    const tail: Buffer[] = [];
    while (hi - lo > 1) {
      const k = splitPoint(hi - lo);
      if (m - lo < k) {
        tail.push(this.range(lo + k, hi));
        hi = lo + k;
      } else {
        tail.push(this.range(lo, lo + k));
        lo += k;
      }
    }
    // PATH appends the sibling after the deeper path: the deepest sibling comes first.
    for (let i = tail.length - 1; i >= 0; i--) path.push(tail[i]);
    return path;
  }

  /** The consistency proof from the first `m` leaves to the first `n` (RFC 9162 2.1.4.1 PROOF / SUBPROOF). */
  consistency(m: number, n = this.n): Buffer[] {
    this.checkSize(n);
    if (!Number.isSafeInteger(m) || m < 1 || m > n) throw new TreeRangeError(`size ${m} is not between 1 and ${n}`, 'out_of_range');
    if (m < this.cut) throw new TreeRangeError(`size ${m} is before the cut at ${this.cut}: those leaves were pruned`, 'pruned');
    const tail: Buffer[] = [];
    let lo = 0;
    let hi = n;
    let mm = m;
    let whole = true;
    while (mm !== hi - lo) {
      const k = splitPoint(hi - lo);
      if (mm <= k) {
        tail.push(this.range(lo + k, hi));
        hi = lo + k;
      } else {
        tail.push(this.range(lo, lo + k));
        lo += k;
        mm -= k;
        whole = false;
      }
    }
    if (!whole) tail.push(this.range(lo, hi));
    tail.reverse();
    return tail;
  }

  /** The hashes of the complete subtrees that make up [0, n), largest (leftmost) first. */
  compactRange(n = this.n): Buffer[] {
    this.checkSize(n);
    const out: Buffer[] = [];
    let lo = 0;
    for (let k = 52; k >= 0; k--) {
      const w = 2 ** k;
      if (lo + w <= n) {
        const h = this.levels[k]?.get(lo / w);
        if (!h) throw new TreeRangeError(`the subtree at ${lo} of ${w} leaves is not kept`, 'pruned');
        out.push(h);
        lo += w;
      }
    }
    return out;
  }
}
