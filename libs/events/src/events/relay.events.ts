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

export type RelayLifecycleEvent = RelayStarted | RelayStopping;
