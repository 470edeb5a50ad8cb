import { Module } from '@nestjs/common';
import { PhoneController } from './phone.controller';
import { PhoneThreadsService } from './phone-threads.service';

/** Phone Threads: `/phone/*` and the `proactive` channel. */
@Module({ controllers: [PhoneController], providers: [PhoneThreadsService], exports: [PhoneThreadsService] })
export class PhoneModule {}
