import type { Ev } from '../event';

/**
 * The operator signed a checkpoint of the log's durable head (seq and hash) with the relay's checkpoint
 * key (named by its key id). The signature itself is not kept: the checkpoint file is the auditor's.
 */
export type StoreCheckpointSigned = Ev<'store.checkpoint_signed', { seq: number; hash: string; keyId: string; by: string }>;

export type StoreEvent = StoreCheckpointSigned;
