import type { Ev } from '../event';

/** Opens every run. Projections of ephemeral state (connections, media, notifications) reset here. */
export type RelayStarted = Ev<
  'relay.started',
  {
    version: string;
    pid: number;
    host: string;
    port: number;
    tls: boolean;
    /** The escape hatch for plain-HTTP API-bearer voice auth as started (flag or environment); absent: off. */
    allowInsecureApiBearer?: boolean;
    /** Present when start-up cut a torn last line off the log. */
    recovered?: { segment: string; droppedBytes: number };
    /** Present when the previous writer did not stop (its lock was left behind and taken over). */
    staleLock?: { pid: number | null; since: string | null };
  }
>;
export type RelayStopping = Ev<'relay.stopping', { reason: string }>;

/**
 * A hot standby took the log over (the leader's session ended): the new leader's epoch, which every
 * later append is fenced by, the epoch it took over from, and who leads now (pid and host, no secret).
 */
export type RelayLeaderChanged = Ev<'relay.leader_changed', { epoch: number; previousEpoch: number; holder: string; version: string }>;

export type RelayLifecycleEvent = RelayStarted | RelayStopping | RelayLeaderChanged;
