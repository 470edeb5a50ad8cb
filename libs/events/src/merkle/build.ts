import { ChainError } from '../event-store';
import type { LogSource } from '../log-source';
import { leafHash, MerkleTree } from './tree';

const SEQ_RE = /^\{"seq":(\d{1,15}),/;
const PRUNED_MARK = '"type":"log.pruned"';

/** The compact range a `log.pruned` record keeps of the cut (base64 hashes), or null: an older record without it. */
export function cutTreeOf(record: string): { cutSeq: number; range: Buffer[] } | null {
  const d = (JSON.parse(record) as { data?: { cutSeq?: unknown; cutTree?: unknown } }).data;
  if (!d || !Number.isSafeInteger(d.cutSeq) || !Array.isArray(d.cutTree) || d.cutTree.length > 64) return null;
  if (!d.cutTree.every((h) => typeof h === 'string' && h.length === 44)) return null;
  return { cutSeq: d.cutSeq as number, range: (d.cutTree as string[]).map((h) => Buffer.from(h, 'base64')) };
}

/**
 * The Merkle tree of a log as stored, leaf i the record of seq i + 1 (its UTF-8 bytes, as the file holds
 * them without the newline and PostgreSQL's `record` column holds them), up to `upTo` records. A pruned
 * log starts at the compact range its `log.pruned` record kept of the cut; the leaves read before that
 * record are held as hashes (32 bytes each) until it is. The chain itself is proven elsewhere (ChainWalker):
 * this only needs the seqs consecutive, which it checks.
 */
export async function buildTree(source: LogSource, upTo = Number.MAX_SAFE_INTEGER): Promise<MerkleTree> {
  let tree: MerkleTree | null = null;
  let first = 0;
  let next = 0;
  const pending: Buffer[] = [];
  for await (const page of source.pages()) {
    for (const record of page) {
      const seq = Number(SEQ_RE.exec(record)?.[1] ?? NaN);
      if (next === 0) {
        first = seq;
        next = seq;
        if (seq === 1) tree = new MerkleTree();
      }
      if (seq !== next) throw new ChainError(next, source.location, `expected seq ${next}, found ${Number.isNaN(seq) ? 'no seq' : seq}`);
      next++;
      // Past `upTo` a pruned log is still read for the record of its cut (written after the records it keeps).
      if (seq > upTo && tree) return tree;
      if (seq <= upTo) {
        const leaf = leafHash(Buffer.from(record, 'utf8'));
        if (tree) tree.appendLeaf(leaf);
        else pending.push(leaf);
      }
      if (tree === null && record.includes(PRUNED_MARK)) {
        const cut = cutTreeOf(record);
        if (cut && cut.cutSeq === first - 1) {
          tree = new MerkleTree(cut.cutSeq, cut.range);
          for (const l of pending) tree.appendLeaf(l);
          pending.length = 0;
          if (seq >= upTo) return tree;
        }
      }
    }
  }
  return finish(tree, first, source);
}

function finish(tree: MerkleTree | null, first: number, source: LogSource): MerkleTree {
  if (tree) return tree;
  if (first === 0) return new MerkleTree();
  throw new ChainError(
    first,
    source.location,
    `the log starts at seq ${first} and no log.pruned record kept the Merkle tree of its cut (pruned before the transparency log): proofs cannot be made`,
  );
}
