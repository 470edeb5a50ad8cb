import { Module } from '@nestjs/common';
import { AgentStoreModule } from '../agent-store/agent-store.module';
import { ProactiveChannel } from './proactive-channel';
import { ThreadDelivery } from './thread-delivery';
import { ThreadViews } from './thread-views';
import { PhoneController } from './threads.controller';
import { PhoneThreadsService } from './threads.service';

/** Phone Threads: `/phone/*` and the `proactive` channel. */
@Module({
  imports: [AgentStoreModule],
  controllers: [PhoneController],
  providers: [ThreadDelivery, ThreadViews, PhoneThreadsService, ProactiveChannel],
  exports: [PhoneThreadsService],
})
export class ThreadsModule {}
