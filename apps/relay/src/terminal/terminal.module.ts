import { Module } from '@nestjs/common';
import { TerminalController } from './terminal.controller';
import { RecordingsService } from './recordings.service';
import { TerminalService } from './terminal.service';

/** The `terminal` channel (remote shells) and the operator's view of them. */
@Module({ controllers: [TerminalController], providers: [TerminalService, RecordingsService], exports: [TerminalService, RecordingsService] })
export class TerminalModule {}
