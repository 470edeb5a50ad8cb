import { Controller, Delete, Get, Param } from '@nestjs/common';
import { Auth } from '../common/auth';
import { EventLog } from '../common/event-log';
import { TerminalService } from './terminal.service';

const epoch = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

/** The operator's view of remote shells and TUI gateways (loopback: the console reads it). */
@Controller('/terminal')
export class TerminalController {
  constructor(
    private readonly log: EventLog,
    private readonly terminal: TerminalService,
  ) {}

  @Get('/shells')
  @Auth('loopback')
  list() {
    const live = new Map(this.terminal.shells().map((s) => [s.spec.shellId, s]));
    return {
      shells: this.log.models.terminal.allShells().map((s) => ({
        shell_id: s.shellId,
        session_name: s.sessionName,
        token_prefix: s.tokenPrefix,
        device_id: s.deviceId,
        pid: s.pid,
        shell: s.shell,
        cols: live.get(s.shellId)?.cols ?? s.cols,
        rows: live.get(s.shellId)?.rows ?? s.rows,
        attached: s.connId !== null,
        opened_at: epoch(s.openedAt),
        detached_at: epoch(s.detachedAt),
        grace_expires_at: epoch(s.graceUntil),
        paused: live.get(s.shellId)?.paused ?? false,
      })),
      tuis: this.log.models.terminal.allTuis().map((t) => ({
        tui_id: t.tuiId,
        token_prefix: t.tokenPrefix,
        pid: t.pid,
        program: t.program,
        started_at: epoch(t.startedAt),
      })),
    };
  }

  @Delete('/shells/:shellId')
  @Auth('loopback')
  async kill(@Param('shellId') shellId: string) {
    const exit = await this.terminal.killByOperator(shellId);
    return { ok: true as const, shell_id: shellId, exit_code: exit.exitCode, signal: exit.signal };
  }
}
