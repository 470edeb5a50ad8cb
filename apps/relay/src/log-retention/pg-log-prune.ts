import { cutTreeAt } from '../transparency/cut-tree';
import { archivePgRows, planPgPrune, PgLogSource, type LogPruned, type RecordedCut } from '@svc/events';
import type { CommandLoop } from '../common/loop/command-loop';
import { signCut, type PruneOptions, type PruneReport } from './log-prune';

/**
 * The same cut for a log in PostgreSQL, with rows for segments: the rows up to the newest one before the cut
 * (never past the snapshot just written) go. In this order: the rows are written to the archive as one
 * segment file (fsynced) when asked; the cut's checkpoint is signed; then the `log.pruned` record is
 * appended and the rows deleted in one transaction (PgEventStore). A crash before that commit leaves the log
 * whole (and at most an archive file a later prune writes again); after it, pruned and recorded.
 */
export async function prunePgLog(loop: CommandLoop, opts: PruneOptions & { pgUrl: string }, snapshotSeq: number): Promise<PruneReport> {
  const source = new PgLogSource(opts.pgUrl);
  try {
    const c = await source.connection();
    const plan = await planPgPrune(
      c,
      'before' in opts.cut ? { before: opts.cut.before, snapshotSeq } : { beforeSeq: opts.cut.beforeSeq, snapshotSeq },
    );
    const base: PruneReport = {
      dry_run: opts.dryRun,
      store: 'postgres',
      cut: plan && { seq: plan.cutSeq, hash: plan.cutHash, at: plan.cutAt },
      segments: [],
      records: plan?.records ?? 0,
      bytes: plan?.bytes ?? 0,
      archive: opts.archive,
      snapshot_seq: snapshotSeq,
      recorded_at: null,
      checkpoint: null,
    };
    if (!plan || opts.dryRun) return base;
    const segments = opts.archive === null ? [] : [await archivePgRows(c, plan, opts.archive)];
    const checkpoint = signCut(opts.svcHome, plan, opts.now, opts.archive);
    const event: LogPruned = {
      type: 'log.pruned',
      data: {
        cutSeq: plan.cutSeq,
        cutHash: plan.cutHash,
        cutAt: plan.cutAt,
        segments,
        archive: opts.archive,
        snapshotSeq,
        by: opts.by,
        cutTree: await cutTreeAt(opts.pgUrl, plan.cutSeq),
      },
    };
    const [recorded] = await loop.record(opts.by === 'operator' ? 'operator' : 'system', [event]);
    const cut: RecordedCut = { cutSeq: plan.cutSeq, cutHash: plan.cutHash, cutAt: plan.cutAt, recordedAt: recorded.seq };
    loop.cut = cut;
    return { ...base, segments, recorded_at: recorded.seq, checkpoint };
  } finally {
    await source.close();
  }
}
