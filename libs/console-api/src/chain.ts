/** The event chain's status and the log's size: the Overview's and the Store page's (types only). */

/** The recorded cut a pruned log starts at: the last dropped record's seq and time (ISO). */
export type ChainCut = { seq: number; at: string };

export type ChainStatus =
  /** `from_seq`: where the proof starts (1, or the record after `cut` in a pruned log). */
  | { state: 'verified'; verified_to_seq: number; from_seq: number; cut: ChainCut | null; checked_at: number }
  | { state: 'broken'; broken_at_seq: number; segment: string; reason: string; checked_at: number };

export type LogSize = { store: 'file' | 'postgres'; bytes: number; segments: number };
