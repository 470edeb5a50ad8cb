import { Module } from '@nestjs/common';
import { TuiService } from './tui.service';

/** The `tui` channel: the agent's TUI gateway process driven over JSON-RPC lines. */
@Module({ providers: [TuiService], exports: [TuiService] })
export class TuiModule {}
