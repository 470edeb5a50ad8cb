import { Controller, Get } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import { EventLog } from '../../common/event-log';
import { terminalView } from '../../terminal/terminal-views';
import { TerminalService } from '../../terminal/terminal.service';
import { ConsoleFeatures } from '../console-features';
import { serviceRef } from './service-ref';

/** Terminal page: shells and TUI processes phones hold open (never their input or output). */
@Controller('/console/api/terminal')
export class TerminalConsoleController {
  private readonly terminal: () => TerminalService;

  constructor(
    ref: ModuleRef,
    features: ConsoleFeatures,
    private readonly log: EventLog,
    private readonly clock: Clock,
  ) {
    this.terminal = serviceRef(ref, TerminalService);
    features.add({ id: 'terminal', title: 'Terminal', order: 50 });
  }

  @Get()
  @Auth('loopback')
  view() {
    return { ok: true, server_time: Math.floor(this.clock.now().getTime() / 1000), ...terminalView(this.log.models, this.terminal().shells()) };
  }
}
