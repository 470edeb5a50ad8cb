import { DomainError, epoch } from '@svc/domain';
import type { NewEvent } from '@svc/events';
import * as fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from './clock';

export type DiskSpace = { freeBytes: number; totalBytes: number };
/** Free space of the filesystem holding `dir` (injectable: tests simulate a full disk without filling one). */
export type DiskSpaceSource = (dir: string) => Promise<DiskSpace>;

export const statfsSource: DiskSpaceSource = async (dir) => {
  const s = await fs.promises.statfs(dir);
  // bavail: what an unprivileged writer may still use (the root reserve is not ours).
  return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
};

/**
 * What is still written while the disk is low: what ends, shrinks or protects (revocations, expiries,
 * shortened grants, closed sockets and shells, calls in flight coming to their end, files retired, failed
 * auths and the blocks they lead to, safety refusals). Everything that adds (pairings, reconnects and
 * renewals, uploads, messages, client reports, new shells or calls, audited fetches) is refused until space
 * returns: a reconnect loop wrote 390 KB in 5 s while the disk was low (issue 34); its disconnects still go.
 * Names, not types: a family added later (trust) is listed too.
 */
const WRITTEN_WHILE_LOW: ReadonlySet<string> = new Set([
  'relay.started',
  'relay.stopping',
  'relay.leader_changed',
  'relay.security_changed',
  'session.revoked',
  'session.expired',
  'session.grant_expired',
  'session.shortened',
  'session.seen',
  'trust.ended',
  'trust.reuse_detected',
  'trust.refused',
  'trust.rotated',
  'pairing.code_expired',
  'pairing.denied',
  'auth.failed',
  'ratelimit.blocked',
  'phone.disconnected',
  'phone.unsubscribed',
  'phone.message_delivered',
  'phone.backlog_flushed',
  'phone.message_expired',
  'phone.message_dropped',
  'phone.message_cancelled',
  'phone.replies_handed',
  'media.evicted',
  'media.expired',
  'media.retired',
  'clipboard.discarded',
  'clipboard.consumed',
  'terminal.detached',
  'terminal.closed',
  'terminal.recording_saved',
  'terminal.recording_removed',
  'tui.stopped',
  'voice.session_ended',
  'desktop.command_completed',
  'bridge.command_answered',
  'bridge.command_failed',
  'secure_link.unavailable',
  // The operator signing in to the console: most needed while the disk is low, and bounded (console-access).
  'console.link_issued',
  'console.signed_in',
  'console.signed_out',
]);

/** Safety-pipeline steps that refuse or switch off: audited even while the disk is low. */
const REFUSING_DECISIONS: ReadonlySet<string> = new Set([
  'sideload_only',
  'master_off',
  'blocked_package',
  'implicit_intent',
  'unconfirmable',
  'confirmation_denied',
  'confirmation_timed_out',
  'confirmation_cancelled',
  'auto_disabled',
]);

export function writtenWhileLow(e: NewEvent): boolean {
  if (e.type === 'bridge.safety_decided') return REFUSING_DECISIONS.has((e.data as { decision: string }).decision);
  return WRITTEN_WHILE_LOW.has(e.type);
}

export type DiskGuardOptions = {
  /** A directory on the filesystem to watch (the relay home: event log, snapshots, uploads). */
  dir: string;
  /** Below this many free bytes the relay stops taking new work; 0 turns the guard off. */
  minFreeBytes: number;
  /** How often free space is read (off the hot path: decisions read the cached answer). */
  checkIntervalMs: number;
  source?: DiskSpaceSource;
  logger: Logger;
  clock: Clock;
};

/**
 * Stops the relay taking work before its disk is full: a full disk makes the log's next write fail, and a
 * failed write stops the relay (state must never run ahead of the disk). Free space is read every
 * `checkIntervalMs`, never on a request; while it is below `minFreeBytes` the command loop refuses
 * decisions that would write anything but `writtenWhileLow` events, with 503 `relay.disk_low` (a socket
 * frame gets it as its channel's error). One warning when space runs low, one line when it is back.
 */
export class DiskGuard {
  private state: { freeBytes: number | null; totalBytes: number | null; low: boolean; checkedAt: number | null } = {
    freeBytes: null,
    totalBytes: null,
    low: false,
    checkedAt: null,
  };
  private checking: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readFailed = false;
  source: DiskSpaceSource;

  constructor(private readonly opts: DiskGuardOptions) {
    this.source = opts.source ?? statfsSource;
  }

  get enabled(): boolean {
    return this.opts.minFreeBytes > 0;
  }

  get low(): boolean {
    return this.state.low;
  }

  /** Reads once now, then every `checkIntervalMs` (the timer never keeps the process alive). */
  async start(): Promise<void> {
    if (!this.enabled) return;
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.opts.checkIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads free space now (one read at a time; callers share the one in progress). */
  refresh(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    this.checking ??= this.read().finally(() => (this.checking = null));
    return this.checking;
  }

  /** The command loop's admission check: throws (nothing is written) when the disk is low and `events` add work. */
  admit(events: readonly NewEvent[]): void {
    if (this.state.low && !events.every(writtenWhileLow)) throw this.refusal();
  }

  /** What a request that brings a file gets while the disk is low; null while there is room. */
  refusalNow(): DomainError | null {
    return this.state.low ? this.refusal() : null;
  }

  private refusal(): DomainError {
    return new DomainError(
      'relay.disk_low',
      'unavailable',
      `the relay's disk is almost full (${mib(this.state.freeBytes)} free, ${mib(this.opts.minFreeBytes)} kept in reserve): it takes no new work until space is freed`,
      { free_bytes: this.state.freeBytes, min_free_bytes: this.opts.minFreeBytes },
    );
  }

  /** `/health`'s `disk`: nothing secret (no path). */
  view(): { free_bytes: number | null; total_bytes: number | null; min_free_bytes: number; low: boolean; checked_at: number | null } {
    return {
      free_bytes: this.state.freeBytes,
      total_bytes: this.state.totalBytes,
      min_free_bytes: this.opts.minFreeBytes,
      low: this.state.low,
      checked_at: epoch(this.state.checkedAt),
    };
  }

  private async read(): Promise<void> {
    let space: DiskSpace;
    try {
      space = await this.source(this.opts.dir);
    } catch (err) {
      // Unknown is not low: a filesystem that cannot say (or a vanished directory) must not stop the relay.
      if (!this.readFailed) this.opts.logger.warn({ err: (err as Error).message }, 'disk guard: free space unknown; not guarding');
      this.readFailed = true;
      return;
    }
    this.readFailed = false;
    const low = space.freeBytes < this.opts.minFreeBytes;
    const was = this.state.low;
    this.state = { freeBytes: space.freeBytes, totalBytes: space.totalBytes, low, checkedAt: this.opts.clock.now().getTime() };
    if (low && !was)
      this.opts.logger.warn(
        { freeBytes: space.freeBytes, minFreeBytes: this.opts.minFreeBytes },
        'disk almost full: refusing new work (pairings, uploads, messages, reports) until space is freed; revocations and expiries are still written',
      );
    else if (!low && was) this.opts.logger.info({ freeBytes: space.freeBytes }, 'disk space is back: taking new work again');
  }
}

const mib = (b: number | null) => (b === null ? 'unknown' : `${Math.floor(b / (1024 * 1024))} MiB`);

/** Past this, a body is a file on its way to the disk (an upload, a clipboard image): refused before it is read. */
export const LOW_DISK_MAX_BODY_BYTES = 64 * 1024;

/**
 * While the disk is low, a request that would bring a file (multipart, or a body past
 * LOW_DISK_MAX_BODY_BYTES, or one of unknown length) is answered 503 before its body is read: the command
 * loop would refuse its event anyway, but only after the file had been streamed to disk.
 */
export function installDiskGuardHook(instance: FastifyInstance, guard: DiskGuard): void {
  instance.addHook('onRequest', (request, reply, done) => {
    if (!guard.low || request.method === 'GET' || request.method === 'HEAD' || request.method === 'DELETE' || request.method === 'OPTIONS')
      return done();
    const length = request.headers['content-length'];
    const big =
      /^multipart\//i.test(request.headers['content-type'] ?? '') ||
      (length === undefined ? request.headers['transfer-encoding'] !== undefined : Number(length) > LOW_DISK_MAX_BODY_BYTES);
    if (!big) return done();
    const e = guard.refusalNow();
    if (!e) return done();
    void reply
      .code(503)
      .header('retry-after', '60')
      .send({ ...e.extra, ok: false, error: e.message, code: e.code });
  });
}
