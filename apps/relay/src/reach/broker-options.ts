import type { Logger } from 'pino';
import type { Clock } from '../common/loop/clock';

/** The broker's bounds (docs/PROTOCOL.md, Reach; `svc reach --help` names the ones an operator may set). */
export const DEFAULT_BROKER_LIMITS = {
  streamsPerHost: 16,
  /**
   * Streams one route credential carries at once. The app opens one per OkHttp connection through Reach
   * (HermesReachTransport.kt's socket factory; the relay speaks HTTP/1.1, so a connection per call in
   * flight): its phone socket, a voice socket, OkHttp's five calls at once per host, and one more so that a
   * phone back from a lost network is not locked out while its dead stream waits for the ping timeout.
   */
  streamsPerRoute: 8,
  hosts: 256,
  registerMs: 10_000,
  idleMs: 300_000,
  /** Refused registrations a minute from one source (an IPv4 address, an IPv6 /64); then 429 until the minute is over. */
  refusalsPerMinute: 30,
  /** Refused registrations a minute from every source together; past it only trusted sources are let in. */
  refusalsPerMinuteTotal: 600,
  /** Sources remembered for refusals, and for trust, each; past it the least recent goes. */
  trackedSources: 4096,
  /** A source whose credential matched stays trusted this long. */
  trustedMs: 3_600_000,
  /** Connection ids of matched registrations, and digests of used bootstrap credentials, kept a day against replays; past this the oldest go first. */
  replayIds: 65_536,
  queueBytes: 8 * 1024 * 1024,
  credentialsPerHost: 1024,
  /** Every socket is pinged this often; one that has not answered by the next ping is closed (1008 `ping_timeout`). */
  pingIntervalMs: 30_000,
};

export type BrokerLimits = typeof DEFAULT_BROKER_LIMITS;

export type BrokerOptions = {
  /** `{"hosts": {"<host id>": {"host_token_sha256": "<base64url SHA-256>"}}}`: digests only, never a token. */
  credentialsFile: string;
  /** Published bootstrap and route credentials (digests) survive a restart here; in memory without it. */
  stateFile?: string | null;
  listen: string;
  port: number;
  tls?: { cert: string; key: string } | null;
  logger: Logger;
  limits?: Partial<BrokerLimits>;
  /** Time for expiry, replays and the per-minute counts (a manual clock in tests); the system clock without it. */
  clock?: Clock;
  /** Every byte the broker forwards, for audits (and the tests that prove it is ciphertext). */
  onForward?: (direction: 'to_host' | 'to_client', bytes: Buffer) => void;
};
