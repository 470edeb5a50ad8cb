import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { EndShellAnswer, TerminalView } from '@svc/console-api';
import { epoch } from '@svc/domain';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import { CommandLoop } from '../../common/command-loop';
import { terminalView } from '../../terminal/terminal-views';
import { TerminalService } from '../../terminal/terminal.service';
import { ConsoleFeatures } from '../console-features';
import { ShellIdParam } from './console.dto';

/** Terminal page: shells and TUI processes phones hold open (never their input or output), and End shell. */
@Controller('/console/api/terminal')
export class TerminalConsoleController {
  constructor(
    private readonly terminal: TerminalService,
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
  ) {
    features.add({ id: 'terminal', title: 'Terminal', order: 50 });
  }

  @Get()
  @Auth('loopback')
  view(): TerminalView {
    return { ok: true, server_time: epoch(this.clock.now()), ...terminalView(this.loop.models, this.terminal.shells()) };
  }

  /** Answered once the shell is gone and its `terminal.closed` (actor `operator`) is durable. */
  @Post('/shells/:shell_id/end')
  @Auth('loopback')
  @HttpCode(200)
  async end(@Param() p: ShellIdParam): Promise<EndShellAnswer> {
    const exit = await this.terminal.killByOperator(p.shell_id);
    return { ok: true, shell_id: p.shell_id, exit_code: exit.exitCode, signal: exit.signal };
  }
}
