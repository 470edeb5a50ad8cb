import type { Logger } from 'pino';
import type { CommandLoop } from '../common/loop/command-loop';

export type RoleHooks = {
  /** Records this relay's new term (`relay.started` and `relay.leader_changed`), once it leads. */
  record: (term: { epoch: number; previous: number }) => Promise<void>;
  /** After the takeover is recorded: start what only a leader runs (Reach, Secure Link). */
  onLead: () => Promise<void> | void;
  /** Before stepping down: close phone sockets, stop what only a leader runs. */
  onStandby: () => Promise<void> | void;
  /** The log cannot be followed (a broken chain): the process must stop. */
  onFatal: (err: Error) => void;
};

/**
 * A hot standby's life on a PostgreSQL log: follow the leader into the read models, wait for the writer's
 * lock, lead; and a leader that lost the log (its session ended, another relay raised the epoch) goes
 * back to following, from its durable models, without a restart.
 */
export class RoleController {
  private stopped = false;
  private waiting: Promise<void> | null = null;
  private stepping: Promise<void> | null = null;
  /** When the last takeover was recorded (ms, this process's clock), for the start-up line and the bench. */
  tookOverAt: number | null = null;

  constructor(
    private readonly loop: CommandLoop,
    private readonly logger: Logger,
    private readonly hooks: RoleHooks,
  ) {}

  /** Starts following and waiting for the lock (in the background). */
  async startStandby(): Promise<void> {
    await this.loop.follow((err) => this.hooks.onFatal(err));
    this.waiting = this.waitAndLead();
  }

  /** The store failed in a way that means another relay may lead: step down to standby (once). */
  stepDown(reason: Error): Promise<void> {
    this.stepping ??= this.doStepDown(reason).finally(() => (this.stepping = null));
    return this.stepping;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.stepping;
    await this.waiting;
  }

  private async doStepDown(reason: Error): Promise<void> {
    if (this.stopped) return;
    this.logger.error({ err: reason.message, lastSeq: this.loop.lastSeq }, 'lost the event log (another relay may lead): stepping down to standby');
    await this.hooks.onStandby();
    await this.loop.stepDown();
    await this.waiting;
    await this.startStandby();
  }

  private async waitAndLead(): Promise<void> {
    try {
      const term = await this.loop.takeOver(() => this.stopped);
      if (!term) return;
      await this.hooks.record(term);
      await this.loop.readAllKeys();
      this.tookOverAt = Date.now();
      this.logger.warn(
        { epoch: term.epoch, previousEpoch: term.previous, lastSeq: this.loop.lastSeq },
        'took over the event log: this relay leads now',
      );
      await this.hooks.onLead();
    } catch (err) {
      // A takeover that failed half-way (the database went away) is retried from standby.
      if (!this.stopped) void this.stepDown(err as Error);
    }
  }
}
