/**
 * Wire shapes of the Metrics and Store pages (`/console/api/metrics`, `/console/api/store`,
 * `/console/api/store/verify`). Types only, like index.ts, which re-exports them. Times are epoch seconds.
 */
import type { ChainCut, ChainStatus } from './chain';

// ── Metrics (`/console/api/metrics`) ──

/** One line of a chart: a value per sample time (null: nothing to say then, e.g. no commit in that interval). */
export type MetricsSeries = { id: string; label: string; values: Array<number | null> };

export type MetricsChart = {
  id: 'http' | 'sockets' | 'commit' | 'bridge' | 'media' | 'threads';
  title: string;
  unit: 'req/s' | 'sockets' | 'ms' | 'per min' | 'bytes/s' | 'messages';
  series: MetricsSeries[];
  /**
   * Counted but not drawn among the lines (`http`: the `console` family, requests to /console: this console's
   * own polling, and scripts using its API), so the page that shows the chart does not dominate it.
   */
  apart?: MetricsSeries;
};

export type MetricsView = {
  ok: true;
  server_time: number;
  /** How often the relay samples, and how far back the ring reaches when full. */
  interval_seconds: number;
  window_seconds: number;
  /** Sample times, oldest first; every series' values line up with them. */
  times: number[];
  charts: MetricsChart[];
  /** The Prometheus text of the same metrics (loopback). */
  metrics_url: string;
};

// ── Store (`/console/api/store`, `/console/api/store/verify`) ──

export type StoreSegment = { file: string; first_seq: number; bytes: number };

/** A projection snapshot: the seq it covers, when it was taken (the relay's clock), its size. */
export type StoreSnapshot = { seq: number; at: number | null; bytes: number };

/** A full chain check from seq 1, run in the background; one at a time. */
export type VerifyJobView = {
  id: number;
  state: 'running' | 'verified' | 'broken' | 'cancelled' | 'failed';
  started_at: number;
  finished_at: number | null;
  /** The last durable seq when the check started: what it proves. */
  up_to_seq: number;
  /** Records proven so far (all of them once verified). */
  records: number;
  /** The file store's bytes read and to read; null for PostgreSQL. */
  bytes_done: number | null;
  bytes_total: number | null;
  /** Wall time spent so far, or in all once finished. */
  duration_ms: number;
  broken: { seq: number; segment: string; reason: string } | null;
  /** Once verified: where the proof started (1, or the record after the recorded cut of a pruned log). */
  from_seq: number | null;
  cut: ChainCut | null;
  error: string | null;
};

export type StoreView = {
  ok: true;
  server_time: number;
  store: 'file' | 'postgres';
  /** A directory, or the database URL without its password. */
  location: string;
  bytes: number;
  segment_count: number;
  /** The file store's newest segments first (at most 50); empty for PostgreSQL. */
  segments: StoreSegment[];
  last_seq: number;
  last_hash: string;
  /** The incremental check the top bar shows. */
  chain: ChainStatus;
  snapshots: StoreSnapshot[];
  snapshot_every: number;
  /** The running check, or the last one since the relay started. */
  verify: VerifyJobView | null;
  /** How a shell on this machine runs the relay's CLI as written (`svc`, or bin/svc's path; SVC_HOME= when not the default). */
  cli: string;
  /** Shell commands for this log: export, verify, replay. */
  commands: Array<{ label: string; command: string }>;
};

export type VerifyStartAnswer = { ok: true; joined: boolean; job: VerifyJobView };

export type VerifyStatusAnswer = { ok: true; server_time: number; job: VerifyJobView | null };

/** One relay on the PostgreSQL database (its svc_relay_members row), as the Store page's Relays card shows it. */
export type RelayMemberView = {
  name: string;
  /** Where it serves (null before it listened). */
  url: string | null;
  role: 'leader' | 'standby';
  epoch: number | null;
  /** The last record it applied. */
  seq: number;
  lag_records: number;
  lag_ms: number;
  /** When it last wrote its row (epoch seconds), and how long ago on this relay's clock. */
  seen_at: number;
  seen_seconds_ago: number;
  /** Not seen for longer than a heartbeat should take: it stopped, froze or lost the database. */
  stale: boolean;
  /** The relay answering this request. */
  self: boolean;
};

/** `GET /console/api/store/relays`: both relays of a hot-standby pair and the newest takeovers. */
export type RelaysView = {
  ok: true;
  server_time: number;
  /** False for the file log (one relay; no standby). */
  supported: boolean;
  relays: RelayMemberView[];
  /** `relay.leader_changed`, newest first (at most 10). */
  history: Array<{ seq: number; at: number; epoch: number | null; previous_epoch: number | null; holder: string | null }>;
  /** After how many seconds unseen a relay is shown stale, and dropped. */
  stale_after_seconds: number;
  forget_after_seconds: number;
};
