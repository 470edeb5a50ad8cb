import { applyPrune, planPrune, type LogPruned, type PrunePlan, type RecordedCut } from '@svc/events';
import { checkpointJson, signCheckpoint } from '@svc/events/checkpoint';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { loadCheckpointKey } from '../common/loop/checkpoint-key';
import type { CommandLoop } from '../common/loop/command-loop';
import { prunePgLog } from './pg-log-prune';
import { cutTreeAt } from '../transparency/cut-tree';

/** Where the cut is: before a time (records older than it) or before a seq. */
export type PruneCut = { before: Date } | { beforeSeq: number };

export type PruneReport = {
  dry_run: boolean;
  /** Where the log is: segments in a directory, or rows of a PostgreSQL table. */
  store: 'file' | 'postgres';
  /** Null when nothing can go (no whole segment before the cut and the latest snapshot). */
  cut: { seq: number; hash: string; at: string } | null;
  segments: string[];
  records: number;
  bytes: number;
  archive: string | null;
  snapshot_seq: number;
  /** The log.pruned record, and the checkpoint of the cut signed with the relay's key (not on a dry run). */
  recorded_at: number | null;
  checkpoint: string | null;
};

export type PruneOptions = {
  svcHome: string;
  /** The file log's directory (unused for PostgreSQL). */
  dir: string;
  /** RELAY_EVENT_STORE: the log is rows of this database. */
  pgUrl?: string | null;
  cut: PruneCut;
  archive: string | null;
  by: 'retention' | 'operator';
  dryRun: boolean;
  now: Date;
};

/** The checkpoint of a cut, kept in the home (and beside the segments in an archive). */
export function cutCheckpointName(cutSeq: number): string {
  return `cut-${String(cutSeq).padStart(12, '0')}.checkpoint.json`;
}

/**
 * Prunes whole segments of a file log before the cut, through the loop that writes it (the relay's own,
 * or one the CLI opened on a stopped relay's home). A snapshot of the head is written first, so the cut can
 * reach the segment being written but never past a snapshot. Then, in this order: the `log.pruned` record
 * (durable), the signed checkpoint of the cut (durable, in the home and the archive), and only then the
 * segments move or go (file-prune.ts): a crash anywhere leaves a log that starts and verifies.
 */
export async function pruneLog(loop: CommandLoop, opts: PruneOptions): Promise<PruneReport> {
  if (!opts.dryRun) await loop.snapshotNow();
  // A dry run plans against the head as a snapshot would cover it (the real run writes that snapshot first).
  const snapshotSeq = opts.dryRun ? loop.lastSeq : loop.snapshotSeq;
  if (opts.pgUrl) return prunePgLog(loop, { ...opts, pgUrl: opts.pgUrl }, snapshotSeq);
  const plan = planPrune(opts.dir, { ...opts.cut, snapshotSeq });
  const base: PruneReport = {
    dry_run: opts.dryRun,
    store: 'file',
    cut: plan && { seq: plan.cutSeq, hash: plan.cutHash, at: plan.cutAt },
    segments: plan?.drop.map((s) => s.file) ?? [],
    records: plan ? plan.cutSeq - plan.drop[0].firstSeq + 1 : 0,
    bytes: plan ? plan.drop.reduce((n, s) => n + fs.statSync(path.join(opts.dir, s.file)).size, 0) : 0,
    archive: opts.archive,
    snapshot_seq: snapshotSeq,
    recorded_at: null,
    checkpoint: null,
  };
  if (!plan || opts.dryRun) return base;
  const cutTree = await cutTreeAt(opts.dir, plan.cutSeq);
  const [recorded] = await loop.record(opts.by === 'operator' ? 'operator' : 'system', [
    prunedEvent(plan, opts.archive, snapshotSeq, opts.by, cutTree),
  ]);
  const checkpoint = signCut(opts.svcHome, plan, opts.now, opts.archive);
  await applyPrune(opts.dir, plan, opts.archive);
  const cut: RecordedCut = { cutSeq: plan.cutSeq, cutHash: plan.cutHash, cutAt: plan.cutAt, recordedAt: recorded.seq };
  loop.cut = cut;
  return { ...base, recorded_at: recorded.seq, checkpoint };
}

function prunedEvent(plan: PrunePlan, archive: string | null, snapshotSeq: number, by: 'retention' | 'operator', cutTree: string[]): LogPruned {
  return {
    type: 'log.pruned',
    data: {
      cutSeq: plan.cutSeq,
      cutHash: plan.cutHash,
      cutAt: plan.cutAt,
      segments: plan.drop.map((s) => s.file),
      archive,
      snapshotSeq,
      by,
      cutTree,
    },
  };
}

/** Signs `{cutSeq, cutHash}` with the relay's checkpoint key and writes it durably; returns the home's copy. */
export function signCut(svcHome: string, plan: { cutSeq: number; cutHash: string }, now: Date, archive: string | null): string {
  const key = loadCheckpointKey(svcHome, { create: true })!;
  const text = checkpointJson(signCheckpoint({ seq: plan.cutSeq, hash: plan.cutHash }, now.toISOString(), key.privateKey, key.publicKey));
  const file = path.join(svcHome, 'relay', 'checkpoints', cutCheckpointName(plan.cutSeq));
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  atomicWrite(file, text, { mode: 0o644 });
  if (archive !== null) {
    fs.mkdirSync(archive, { recursive: true, mode: 0o700 });
    atomicWrite(path.join(archive, cutCheckpointName(plan.cutSeq)), text, { mode: 0o644 });
  }
  return file;
}
