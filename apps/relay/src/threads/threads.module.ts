import { Module } from '@nestjs/common';
import { AgentStoreModule } from '../agent-store/agent-store.module';
import { PhoneController } from './threads.controller';
import { PhoneThreadsService } from './threads.service';

/** Phone Threads: `/phone/*` and the `proactive` channel. */
@Module({ imports: [AgentStoreModule], controllers: [PhoneController], providers: [PhoneThreadsService], exports: [PhoneThreadsService] })
export class ThreadsModule {}
