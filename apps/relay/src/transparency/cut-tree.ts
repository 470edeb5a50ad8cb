import { openLogSource } from '@svc/events';
import { buildTree } from '@svc/events/merkle/build';

/**
 * The compact range of the Merkle tree at a cut (at most log2(n) base64 hashes), read from the log before
 * its head is dropped and kept in the `log.pruned` record: a pruned log then still proves every later record
 * and every tree size from the cut on (tree.ts, MerkleTree's cut). A log pruned before this kept none, and
 * proofs of it need the archive walked with it.
 */
export async function cutTreeAt(location: string, cutSeq: number): Promise<string[]> {
  const source = openLogSource(location);
  try {
    return (await buildTree(source, cutSeq)).compactRange(cutSeq).map((h) => h.toString('base64'));
  } finally {
    await source.close();
  }
}
