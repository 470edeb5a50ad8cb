import { createHash, randomBytes } from 'node:crypto';
import { MerkleTree, TreeRangeError, leafHash } from './tree';
import { verifyConsistency, verifyInclusion } from './verify';

/*
 * A second implementation, written here from the RFC text and sharing nothing with tree.ts/verify.ts:
 * MTH, PATH and PROOF as the recursive definitions of RFC 9162 2.1.1, 2.1.3.1 and 2.1.4.1 over a plain
 * array of leaf hashes, and the verifiers of 2.1.3.2 and 2.1.4.2 with BigInt arithmetic.
 */
const H = (...parts: Buffer[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const refLeaf = (d: Buffer): Buffer => H(Buffer.from([0x00]), d);
const refNode = (l: Buffer, r: Buffer): Buffer => H(Buffer.from([0x01]), l, r);
const k2 = (n: number): number => 2 ** Math.ceil(Math.log2(n) - 1); // largest power of two < n (n > 1)

/** The RFC's recursion over D[lo:hi] of `d` (memoized per range: the definitions, not their cost). */
function reference(d: Buffer[]) {
  const memo = new Map<string, Buffer>();
  const mth = (lo: number, hi: number): Buffer => {
    if (hi - lo === 0) return H();
    if (hi - lo === 1) return d[lo];
    const key = `${lo}:${hi}`;
    let h = memo.get(key);
    if (!h) {
      const k = k2(hi - lo);
      h = refNode(mth(lo, lo + k), mth(lo + k, hi));
      memo.set(key, h);
    }
    return h;
  };
  const path = (m: number, lo: number, hi: number): Buffer[] => {
    if (hi - lo <= 1) return [];
    const k = k2(hi - lo);
    return m < k ? [...path(m, lo, lo + k), mth(lo + k, hi)] : [...path(m - k, lo + k, hi), mth(lo, lo + k)];
  };
  const subproof = (m: number, lo: number, hi: number, b: boolean): Buffer[] => {
    if (m === hi - lo) return b ? [] : [mth(lo, hi)];
    const k = k2(hi - lo);
    return m <= k ? [...subproof(m, lo, lo + k, b), mth(lo + k, hi)] : [...subproof(m - k, lo + k, hi, false), mth(lo, lo + k)];
  };
  return { mth, path, subproof };
}
function refVerifyInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = refNode(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else r = refNode(r, p);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  return sn === 0n && r.equals(root);
}
function refVerifyConsistency(first: number, second: number, r1: Buffer, r2: Buffer, proof: Buffer[]): boolean {
  if (first === second) return proof.length === 0 && r1.equals(r2);
  if (proof.length === 0) return false;
  const p = (first & (first - 1)) === 0 ? [r1, ...proof] : proof;
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while ((fn & 1n) === 1n) [fn, sn] = [fn >> 1n, sn >> 1n];
  let fr = p[0];
  let sr = p[0];
  for (const c of p.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = refNode(c, fr);
      sr = refNode(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else sr = refNode(sr, c);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  return fr.equals(r1) && sr.equals(r2) && sn === 0n;
}

const hex = (p: Buffer[]): string => p.map((b) => b.toString('hex')).join(',');
const records = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.from(`{"seq":${i + 1},"x":"${i}"}`));

describe('Merkle tree (RFC 9162 2.1) against a second implementation', () => {
  const N = 300;
  const data = records(N);
  const leaves = data.map(refLeaf);
  const tree = new MerkleTree();
  for (const d of data) tree.appendRecord(d);
  const ref = reference(leaves);

  it('leaf hashes and the empty root are the RFC ones', () => {
    expect(leafHash(data[0]).equals(leaves[0])).toBe(true);
    expect(new MerkleTree().root().toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('every root, inclusion proof and consistency proof for every size 1..300', () => {
    // Failures are collected (one expect per proof is slower than the proofs themselves).
    const bad: string[] = [];
    let checked = 0;
    for (let n = 1; n <= N; n++) {
      const root = ref.mth(0, n);
      if (!tree.root(n).equals(root)) bad.push(`root ${n}`);
      for (let m = 0; m < n; m++) {
        const proof = tree.inclusion(m, n);
        if (hex(proof) !== hex(ref.path(m, 0, n))) bad.push(`inclusion ${m} in ${n}: not PATH`);
        if (!refVerifyInclusion(m, n, leaves[m], proof, root)) bad.push(`inclusion ${m} in ${n}: second verifier`);
        if (!verifyInclusion(m, n, leaves[m], proof, root)) bad.push(`inclusion ${m} in ${n}: verify.ts`);
        checked++;
      }
      for (let m = 1; m <= n; m++) {
        const proof = tree.consistency(m, n);
        if (hex(proof) !== hex(ref.subproof(m, 0, n, true))) bad.push(`consistency ${m} to ${n}: not PROOF`);
        if (!refVerifyConsistency(m, n, ref.mth(0, m), root, proof)) bad.push(`consistency ${m} to ${n}: second verifier`);
        if (!verifyConsistency(m, n, tree.root(m), root, proof)) bad.push(`consistency ${m} to ${n}: verify.ts`);
        checked++;
      }
    }
    expect(bad.slice(0, 10)).toEqual([]);
    expect(checked).toBe(N * (N + 1));
  }, 120_000);

  it('a wrong leaf, index, size, root or proof is refused by both verifiers', () => {
    const n = 77;
    const root = tree.root(n);
    const proof = tree.inclusion(40, n);
    expect(verifyInclusion(40, n, leaves[41], proof, root)).toBe(false);
    expect(verifyInclusion(41, n, leaves[40], proof, root)).toBe(false);
    expect(verifyInclusion(40, 200, leaves[40], proof, root)).toBe(false);
    expect(verifyInclusion(40, n, leaves[40], proof.slice(1), root)).toBe(false);
    expect(verifyInclusion(40, n, leaves[40], proof, tree.root(n - 1))).toBe(false);
    const cons = tree.consistency(30, n);
    expect(verifyConsistency(30, n, tree.root(31), root, cons)).toBe(false);
    expect(verifyConsistency(30, n, tree.root(30), tree.root(76), cons)).toBe(false);
    expect(verifyConsistency(30, n, tree.root(30), root, [...cons, cons[0]])).toBe(false);
    expect(refVerifyConsistency(30, n, tree.root(31), root, cons)).toBe(false);
    expect(refVerifyInclusion(40, n, leaves[41], proof, root)).toBe(false);
  });

  it('random pairs up to 100k leaves', () => {
    const big = 100_000;
    const t = new MerkleTree();
    const leafOf = (i: number): Buffer => refLeaf(Buffer.from(`r${i}`));
    const sizes = new Set<number>([1, 2, 3, 65_536, 65_537, big]);
    while (sizes.size < 60) sizes.add(1 + (randomBytes(4).readUInt32BE() % big));
    // The second implementation's roots: a left-to-right fold of the complete subtrees (a stack), not the recursion.
    const roots = new Map<number, Buffer>();
    const stack: Array<{ h: Buffer; w: number }> = [];
    for (let i = 0; i < big; i++) {
      const l = leafOf(i);
      t.appendLeaf(l);
      stack.push({ h: l, w: 1 });
      while (stack.length > 1 && stack[stack.length - 1].w === stack[stack.length - 2].w) {
        const r = stack.pop()!;
        const left = stack.pop()!;
        stack.push({ h: refNode(left.h, r.h), w: left.w * 2 });
      }
      if (sizes.has(i + 1))
        roots.set(
          i + 1,
          stack.reduceRight<Buffer | null>((acc, s) => (acc ? refNode(s.h, acc) : s.h), null)!,
        );
    }
    const sorted = [...sizes].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i++) {
      const n = sorted[i];
      expect(t.root(n).equals(roots.get(n)!)).toBe(true);
      const leaf = randomBytes(4).readUInt32BE() % n;
      expect(refVerifyInclusion(leaf, n, leafOf(leaf), t.inclusion(leaf, n), roots.get(n)!)).toBe(true);
      for (const m of sorted.slice(0, i + 1).filter((_, j) => j % 3 === i % 3 || j === i)) {
        expect(refVerifyConsistency(m, n, roots.get(m)!, roots.get(n)!, t.consistency(m, n))).toBe(true);
      }
    }
  }, 60_000);

  it('a pruned tree keeps its compact range at the cut: later proofs are the same, earlier ones are refused', () => {
    for (const cut of [1, 2, 5, 64, 100, 129, 255]) {
      const pruned = new MerkleTree(cut, tree.compactRange(cut));
      for (let i = cut; i < N; i++) pruned.appendRecord(data[i]);
      expect(pruned.root().equals(tree.root())).toBe(true);
      for (const n of [cut, cut + 1, N]) {
        if (n > N) continue;
        expect(pruned.root(n).equals(tree.root(n))).toBe(true);
        for (let m = cut; m < n; m++) expect(hex(pruned.inclusion(m, n))).toBe(hex(tree.inclusion(m, n)));
        for (let m = cut; m <= n; m++) expect(hex(pruned.consistency(m, n))).toBe(hex(tree.consistency(m, n)));
      }
      if (cut > 1) {
        expect(() => pruned.inclusion(cut - 1, N)).toThrow(TreeRangeError);
        expect(() => pruned.consistency(cut - 1, N)).toThrow(TreeRangeError);
      }
    }
  });

  it('out-of-range sizes and leaves are refused with a range error', () => {
    expect(() => tree.inclusion(300, 300)).toThrow(TreeRangeError);
    expect(() => tree.inclusion(0, 301)).toThrow(TreeRangeError);
    expect(() => tree.consistency(0, 10)).toThrow(TreeRangeError);
    expect(() => tree.consistency(11, 10)).toThrow(TreeRangeError);
    expect(() => new MerkleTree(5, [])).toThrow(TreeRangeError);
  });
});
