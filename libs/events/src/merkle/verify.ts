import { nodeHash } from './tree';

/**
 * The RFC 9162 verification algorithms, step for step: what an auditor (and the witness) runs on a
 * proof. Sizes are plain numbers (a log stays far below 2^53), halved by division, not bit shifts (which
 * stop at 2^31).
 */

const lsb = (x: number): boolean => x % 2 === 1;
const half = (x: number): number => Math.floor(x / 2);

/** RFC 9162 2.1.3.2: whether `proof` proves leaf `index` (hash `leaf`) in the tree of `size` leaves with `root`. */
export function verifyInclusion(index: number, size: number, leaf: Buffer, proof: readonly Buffer[], root: Buffer): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!lsb(fn))
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 2.1.4.2: whether `proof` proves the tree of `second` leaves (`secondRoot`) extends that of `first` (`firstRoot`). */
export function verifyConsistency(first: number, second: number, firstRoot: Buffer, secondRoot: Buffer, proof: readonly Buffer[]): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 1 || first > second) return false;
  // Equal sizes: the proof is empty and the roots are the same (RFC 9162 2.1.4.1: PROOF(n, D[n]) is empty).
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (proof.length === 0) return false;
  const path = Number.isInteger(Math.log2(first)) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (lsb(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!lsb(fn))
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0;
}
