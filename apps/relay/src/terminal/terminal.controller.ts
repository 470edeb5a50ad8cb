import { Controller, Delete, Get, Param } from '@nestjs/common';
import { Auth } from '../common/auth/auth';
import { CommandLoop } from '../common/loop/command-loop';
import { terminalView } from './terminal-views';
import { TerminalService } from './terminal.service';

/** The operator's view of remote shells and TUI gateways (loopback: the console reads it). */
@Controller('/terminal')
export class TerminalController {
  constructor(
    private readonly loop: CommandLoop,
    private readonly terminal: TerminalService,
  ) {}

  @Get('/shells')
  @Auth('operator')
  list() {
    return terminalView(this.loop.models, this.terminal.shells());
  }

  @Delete('/shells/:shellId')
  @Auth('operator')
  async kill(@Param('shellId') shellId: string) {
    const exit = await this.terminal.killByOperator(shellId);
    return { ok: true as const, shell_id: shellId, exit_code: exit.exitCode, signal: exit.signal };
  }
}
