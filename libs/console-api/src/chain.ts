/** The event chain's status and the log's size: the Overview's and the Store page's (types only). */

export type ChainStatus =
  | { state: 'verified'; verified_to_seq: number; checked_at: number }
  | { state: 'broken'; broken_at_seq: number; segment: string; reason: string; checked_at: number };

export type LogSize = { store: 'file' | 'postgres'; bytes: number; segments: number };
