import { Module } from '@nestjs/common';
import { LogRetentionService } from './log-retention.service';

/** Pruning the event log by age (RELAY_LOG_RETENTION_DAYS), in whole segments behind a snapshot. */
@Module({ providers: [LogRetentionService] })
export class LogRetentionModule {}
