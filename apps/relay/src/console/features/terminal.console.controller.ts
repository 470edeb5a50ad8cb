import { Controller, Get } from '@nestjs/common';
import type { TerminalView } from '@svc/console-api';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import { CommandLoop } from '../../common/command-loop';
import { terminalView } from '../../terminal/terminal-views';
import { TerminalService } from '../../terminal/terminal.service';
import { ConsoleFeatures } from '../console-features';

/** Terminal page: shells and TUI processes phones hold open (never their input or output). */
@Controller('/console/api/terminal')
export class TerminalConsoleController {
  constructor(
    private readonly terminal: TerminalService,
    features: ConsoleFeatures,
    private readonly log: CommandLoop,
    private readonly clock: Clock,
  ) {
    features.add({ id: 'terminal', title: 'Terminal', order: 50 });
  }

  @Get()
  @Auth('loopback')
  view(): TerminalView {
    return { ok: true, server_time: Math.floor(this.clock.now().getTime() / 1000), ...terminalView(this.log.models, this.terminal.shells()) };
  }
}
