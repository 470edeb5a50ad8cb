import { verifySource, type LogSource } from '@svc/events';
import { buildTree } from '@svc/events/merkle/build';
import { TreeRangeError, type MerkleTree } from '@svc/events/merkle/tree';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { svcHomeFrom } from '../common/config/config';
import { logIdentity, signTreeHead } from '../transparency/log-identity';
import { recordText } from '@svc/events';
import { CliError, EXIT, line, parseFlags, progressLine, UsageError, type CliIo } from './io';
import { resolveLogSource } from './log-dir';

/** A whole number from 1 on (a seq or a tree size), or a usage error naming the flag. */
function count(flag: string, text: string | undefined, command: string): number | undefined {
  if (text === undefined) return undefined;
  const n = /^[1-9][0-9]{0,14}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${flag} ${text.slice(0, 20)}: a whole number from 1 on`, command);
  return n;
}

/** The tree of a proven log: the chain is checked first (a proof of a broken log would prove nothing). */
export async function provenTree(source: LogSource, io: CliIo): Promise<{ tree: MerkleTree; source: LogSource }> {
  const progress = progressLine(io.stderr, 'verifying');
  let report;
  try {
    report = await verifySource(source, progress.update);
  } finally {
    progress.done();
  }
  if (!report.ok)
    throw new CliError(`event log broken at seq ${report.seq} (${report.segment}): ${report.reason}\nno proof of a log that fails its own`);
  try {
    return { tree: await buildTree(source, report.lastSeq), source };
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

// ------------------------------------------------------------------------------------------------ vkey

export function vkeyCommand(args: string[], io: CliIo): number {
  const v = parseFlags('relay events vkey', args, { json: { type: 'boolean' } });
  const id = logIdentity(svcHomeFrom(io.env));
  if (v.json) line(io.stdout, JSON.stringify({ vkey: id.vkey, origin: id.origin, key_id: id.key.keyId }, null, 2));
  else line(io.stdout, id.vkey);
  return EXIT.ok;
}

// ------------------------------------------------------------------------------------- note checkpoint

/** `events checkpoint` in its default form: the C2SP checkpoint of the proven log, signed as a note. */
export async function noteCheckpoint(source: LogSource, out: string | undefined, io: CliIo): Promise<number> {
  let tree: MerkleTree;
  try {
    ({ tree } = await provenTree(source, io));
  } finally {
    await source.close();
  }
  if (tree.size === 0) throw new CliError(`the log at ${source.location} is empty: there is no record to sign yet`);
  const id = logIdentity(svcHomeFrom(io.env));
  if (id.key.created) line(io.stderr, `made a new checkpoint key: ${id.key.file}; give its verifier key to your auditor ("svc relay events vkey")`);
  const note = signTreeHead(id, tree.size, tree.root());
  if (out === undefined) {
    io.stdout.write(note);
    return EXIT.ok;
  }
  atomicWrite(path.resolve(out), note, { mode: 0o644 });
  line(io.stdout, `checkpoint of tree size ${tree.size} (root ${tree.root().toString('base64')}) signed by ${id.origin}: ${out}`);
  return EXIT.ok;
}

// ----------------------------------------------------------------------------------------------- proof

const PROOF = 'relay events proof';

/**
 * `svc relay events proof --seq N [--size S]`: the record of seq N and its RFC 9162 inclusion proof in the
 * tree of S records (default: the whole log); `--from M --to N`: the consistency proof between the trees
 * of M and N records. JSON on stdout, hashes in base64 (as checkpoints carry the root).
 */
export async function proofCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags(PROOF, args, {
    log: { type: 'string' },
    seq: { type: 'string' },
    size: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  });
  const seq = count('seq', v.seq, PROOF);
  const size = count('size', v.size, PROOF);
  const from = count('from', v.from, PROOF);
  const to = count('to', v.to, PROOF);
  const inclusion = seq !== undefined;
  if (inclusion === (from !== undefined || to !== undefined))
    throw new UsageError('ask for one proof: --seq N [--size S] (inclusion), or --from M --to N (consistency)', PROOF);
  if (!inclusion && (from === undefined || to === undefined || size !== undefined))
    throw new UsageError('a consistency proof takes both --from M and --to N (and no --size)', PROOF);
  const source = resolveLogSource(io.env, v.log);
  try {
    const { tree } = await provenTree(source, io);
    try {
      if (inclusion) {
        const n = size ?? tree.size;
        const proof = tree.inclusion(seq - 1, n);
        const record = await recordText(source, seq);
        if (record === null) throw new CliError(`no record of seq ${seq} in ${source.location}`);
        const out = {
          seq,
          tree_size: n,
          leaf_hash: tree.leaf(seq - 1)!.toString('base64'),
          record,
          inclusion: proof.map((h) => h.toString('base64')),
        };
        line(io.stdout, JSON.stringify(out, null, 2));
      } else {
        const proof = tree.consistency(from!, to);
        line(io.stdout, JSON.stringify({ from, to, consistency: proof.map((h) => h.toString('base64')) }, null, 2));
      }
    } catch (err) {
      if (err instanceof TreeRangeError) throw new CliError(err.message);
      throw err;
    }
  } finally {
    await source.close();
  }
  return EXIT.ok;
}
