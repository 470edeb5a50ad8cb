import { Module } from '@nestjs/common';
import { PhoneController } from './threads.controller';
import { PhoneThreadsService } from './threads.service';

/** Phone Threads: `/phone/*` and the `proactive` channel. */
@Module({ controllers: [PhoneController], providers: [PhoneThreadsService], exports: [PhoneThreadsService] })
export class ThreadsModule {}
