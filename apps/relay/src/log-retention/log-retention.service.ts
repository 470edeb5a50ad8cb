import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import * as path from 'node:path';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { relayDir } from '../common/config/config';
import { Scheduler } from '../common/loop/scheduler';
import { LOGGER, RELAY_CONFIG } from '../common/auth/tokens';
import { pruneLog, type PruneReport } from './log-prune';

const DAY_MS = 86_400_000;

/**
 * RELAY_LOG_RETENTION_DAYS: once an hour of the relay's clock, whole segments older than that many days go
 * (or move to RELAY_LOG_ARCHIVE_DIR), inside the relay that writes the log, so nothing else needs its lock.
 */
@Injectable()
export class LogRetentionService {
  private lastCheck = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    scheduler: Scheduler,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    scheduler.onTick(() => this.retention());
  }

  private async retention(): Promise<void> {
    const days = this.config.logRetentionDays;
    if (days === 0 || this.loop.storeKind !== 'file') return;
    const now = this.clock.now();
    if (now.getTime() - this.lastCheck < 3_600_000) return;
    this.lastCheck = now.getTime();
    const report: PruneReport = await pruneLog(this.loop, {
      svcHome: this.config.svcHome,
      dir: path.join(relayDir(this.config), 'events'),
      cut: { before: new Date(now.getTime() - days * DAY_MS) },
      archive: this.config.logArchiveDir,
      by: 'retention',
      dryRun: false,
      now,
    });
    if (report.cut)
      this.logger.info(
        { cutSeq: report.cut.seq, segments: report.segments.length, bytes: report.bytes, archive: report.archive },
        'event log pruned (RELAY_LOG_RETENTION_DAYS)',
      );
  }
}
