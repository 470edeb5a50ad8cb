import type { Ev } from '../event';

/**
 * The head of the log was cut: every record up to `cutSeq` (whose hash is `cutHash`) was dropped or moved to
 * an archive, in whole segments, none newer than the snapshot at `snapshotSeq`. A log whose first record is
 * `cutSeq + 1` is proven from there on: its first record must link to `cutHash`, and a checkpoint of the cut
 * signed with the relay's key lets an auditor tie an archive to it (docs/AUDITING.md).
 */
export type LogPruned = Ev<
  'log.pruned',
  {
    cutSeq: number;
    cutHash: string;
    /** The time of the last dropped record. */
    cutAt: string;
    segments: string[];
    /** Where the dropped segments went (an archive directory), or null: deleted. */
    archive: string | null;
    /** The snapshot start-up restores instead of the dropped records. */
    snapshotSeq: number;
    /** `retention`: RELAY_LOG_RETENTION_DAYS, inside the relay; `operator`: svc relay events prune. */
    by: 'retention' | 'operator';
    /**
     * The Merkle tree's compact range at the cut (base64 hashes of its complete subtrees, largest first): what
     * proofs of later records need of the dropped ones (issue 39). Absent in records written before it.
     */
    cutTree?: string[];
  }
>;

export type LogEvent = LogPruned;
