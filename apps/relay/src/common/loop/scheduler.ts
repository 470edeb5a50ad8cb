import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import type { Logger } from 'pino';
import { Clock } from './clock';
import { CommandLoop, type Decide } from './command-loop';
import { LOGGER } from '../auth/tokens';

/**
 * Time-driven decisions (code and session expiry...). Runs every second on the real clock, and at once
 * whenever a manual clock is advanced, so tests see expiry without sleeping.
 */
@Injectable()
export class Scheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly sweeps = new Map<string, Decide>();
  private readonly hooks: Array<() => void | Promise<void>> = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  intervalMs = 1000;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    clock.onAdvance(() => void this.sweep());
  }

  /** A decision run by the system on each tick (it returns nothing when nothing is due). */
  register(name: string, decide: Decide): void {
    this.sweeps.set(name, decide);
  }

  /** A side effect run on each tick after the sweeps (it may issue commands of its own). */
  onTick(hook: () => void | Promise<void>): void {
    this.hooks.push(hook);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Runs every sweep once; concurrent calls share the run in progress, then run again. */
  async sweep(): Promise<void> {
    while (this.running) await this.running;
    this.running = this.sweepOnce().finally(() => (this.running = null));
    return this.running;
  }

  private async sweepOnce(): Promise<void> {
    // A standby decides nothing: the leader's sweeps expire what is due, and the records come through the log.
    if (this.loop.standby) return;
    for (const [name, decide] of this.sweeps) {
      try {
        await this.loop.run('system', decide);
      } catch (err) {
        if (!(err instanceof DomainError)) this.logger.error({ sweep: name, err: (err as Error).message }, 'sweep failed');
      }
    }
    for (const hook of this.hooks) {
      try {
        await hook();
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'tick hook failed');
      }
    }
  }
}
