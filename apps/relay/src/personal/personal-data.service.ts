import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { StoredRelayEvent } from '@svc/events';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { forgetEvents, retentionCutoff, type ForgetRequest } from './forget';
import type { PersonalKeyStore } from './key-store';

export type ForgetAnswer = { ok: true; keys: number; seq: number | null };

/**
 * Forgetting personal content: decides which data keys go (a device, a time, retention), records it, then
 * destroys the keys and renews the snapshots. The keys go on the durable event (whoever recorded it),
 * and a relay that stopped in between destroys them at its next start.
 */
@Injectable()
export class PersonalDataService implements OnApplicationBootstrap, OnApplicationShutdown {
  private sub: Subscription | null = null;
  private work: Promise<void> = Promise.resolve();
  private lastRetentionCheck = 0;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    scheduler.onTick(() => this.retention());
  }

  get keys(): PersonalKeyStore | null {
    return this.loop.sealer?.keys ?? null;
  }

  onApplicationBootstrap(): void {
    this.sub = this.loop.bus.events$.subscribe((e: StoredRelayEvent) => {
      if (e.type === 'personal.forgotten') this.queue(e.data.keys, e.seq);
    });
    const left = this.loop.models.personalData.lastKeys().filter((id) => this.keys?.get(id));
    if (left.length > 0) this.queue(left, this.loop.models.lastSeq);
  }

  onApplicationShutdown(): Promise<void> {
    this.sub?.unsubscribe();
    return this.work;
  }

  /** Records a forgetting (nothing when there is nothing to forget) and waits until its keys are destroyed. */
  async forget(actor: string, req: ForgetRequest): Promise<ForgetAnswer> {
    const ids = this.keys?.ids() ?? [];
    const [e] = await this.loop.run(actor, (m) => forgetEvents(ids, req, m.personalData));
    await this.settled();
    return { ok: true, keys: e ? (e.data as { keys: string[] }).keys.length : 0, seq: e?.seq ?? null };
  }

  /** Resolves when every forgetting seen so far has destroyed its keys and renewed the snapshots. */
  settled(): Promise<void> {
    return this.work;
  }

  private queue(ids: readonly string[], seq: number): void {
    const keys = this.keys;
    if (!keys) return;
    this.work = this.work
      .then(async () => {
        const n = await keys.destroy(ids);
        await this.loop.renewSnapshots();
        this.logger.info({ seq, keys: n }, 'personal content forgotten: data keys destroyed, snapshots renewed');
      })
      .catch((err: unknown) => this.logger.error({ seq, err: (err as Error).message }, 'forgetting: keys not destroyed (retried at the next start)'));
  }

  /** Past RELAY_PERSONAL_DATA_RETENTION_DAYS, checked once a minute of the relay's clock. */
  private async retention(): Promise<void> {
    const now = this.clock.now();
    if (now.getTime() - this.lastRetentionCheck < 60_000) return;
    this.lastRetentionCheck = now.getTime();
    const before = retentionCutoff(now, this.config.personalDataRetentionDays);
    if (!before) return;
    await this.forget('system', { scope: 'retention', device: null, before });
  }
}
