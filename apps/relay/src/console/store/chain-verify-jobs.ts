import { Injectable, OnModuleDestroy } from '@nestjs/common';
import type { ChainStatus, VerifyJobView } from '@svc/console-api';
import { DomainError, epoch } from '@svc/domain';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { ConsoleState } from '../console-state.service';
import { walkFileLog, walkPgLog, type WalkControl, type WalkOutcome } from './chain-walk';

type Running = { view: VerifyJobView; done: Promise<VerifyJobView>; t0: bigint };

/** The event loop's turn between two pieces of a check. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The console's full chain check from seq 1, as a background job with progress: one at a time (a second
 * start joins the running one), stopped at its next piece when the relay shuts down, its verdict handed to
 * the incremental monitor the top bar shows. A read changes no state, so it records no event; the last
 * result is kept in memory until the relay stops.
 */
@Injectable()
export class ChainVerifyJobs implements OnModuleDestroy {
  private running: Running | null = null;
  private last: VerifyJobView | null = null;
  private nextId = 1;
  private stopping = false;
  /** Awaited between chunks (a test holds a check here to watch its progress). */
  pace: () => Promise<void> = nextTurn;
  /** A file segment is read this much at a time (a MiB: a few ms of work between two turns of the event loop). */
  chunkBytes = 1 << 20;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly state: ConsoleState,
  ) {}

  /** Starts a check, or joins the one running. `done` settles with the finished job. */
  start(): { joined: boolean; job: VerifyJobView; done: Promise<VerifyJobView> } {
    if (this.running) return { joined: true, job: this.view(this.running), done: this.running.done };
    if (this.stopping) throw new DomainError('store.shutting_down', 'unavailable', 'the relay is shutting down');
    const view: VerifyJobView = {
      id: this.nextId++,
      state: 'running',
      started_at: epoch(this.clock.now().getTime()),
      finished_at: null,
      up_to_seq: this.loop.lastSeq,
      records: 0,
      bytes_done: null,
      bytes_total: null,
      duration_ms: 0,
      broken: null,
      from_seq: null,
      cut: null,
      error: null,
    };
    const job: Running = { view, t0: process.hrtime.bigint(), done: Promise.resolve(view) };
    job.done = this.run(job);
    this.running = job;
    return { joined: false, job: this.view(job), done: job.done };
  }

  /** The running check (its duration so far), or the last one. */
  status(): VerifyJobView | null {
    return this.running ? this.view(this.running) : this.last;
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await this.running?.done;
  }

  private async run(job: Running): Promise<VerifyJobView> {
    const ctl: WalkControl = {
      upTo: job.view.up_to_seq,
      chunkBytes: this.chunkBytes,
      pace: () => this.pace(),
      stopped: () => this.stopping,
      onProgress: (p) => Object.assign(job.view, { records: p.records, bytes_done: p.bytesDone, bytes_total: p.bytesTotal }),
    };
    let outcome: WalkOutcome | { state: 'failed'; error: string };
    try {
      await Promise.resolve(); // the caller holds the job before its first read
      const where = this.state.logSource();
      outcome = where.kind === 'postgres' ? await walkPgLog(where.source, ctl) : await walkFileLog(where.dir, ctl);
    } catch (err) {
      outcome = this.stopping ? { state: 'cancelled', records: job.view.records } : { state: 'failed', error: (err as Error).message };
    }
    const done: VerifyJobView = {
      ...this.view(job),
      state: outcome.state,
      finished_at: epoch(this.clock.now().getTime()),
      records: 'records' in outcome ? outcome.records : job.view.records,
      broken: outcome.state === 'broken' ? { seq: outcome.seq, segment: outcome.segment, reason: outcome.reason } : null,
      from_seq: outcome.state === 'verified' ? outcome.fromSeq : null,
      cut: outcome.state === 'verified' ? outcome.cut : null,
      error: outcome.state === 'failed' ? outcome.error : null,
    };
    this.running = null;
    this.last = done;
    const status = chainStatusOf(done, this.clock.now().getTime());
    if (status) this.state.adoptFullCheck(status);
    return done;
  }

  private view(job: Running): VerifyJobView {
    return { ...job.view, duration_ms: Math.round(Number(process.hrtime.bigint() - job.t0) / 1e4) / 100 };
  }
}

/** A finished check as the monitor's status (null: it proved nothing either way). */
export function chainStatusOf(job: VerifyJobView, nowMs: number): ChainStatus | null {
  if (job.state === 'verified')
    return { state: 'verified', verified_to_seq: job.up_to_seq, from_seq: job.from_seq ?? 1, cut: job.cut, checked_at: nowMs };
  if (job.state === 'broken' && job.broken) {
    return { state: 'broken', broken_at_seq: job.broken.seq, segment: job.broken.segment, reason: job.broken.reason, checked_at: nowMs };
  }
  return null;
}
