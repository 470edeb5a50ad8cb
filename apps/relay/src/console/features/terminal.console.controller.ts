import { Controller, Get } from '@nestjs/common';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import { EventLog } from '../../common/event-log';
import { ConsoleFeatures } from '../console-features';

const epoch = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

/** Terminal page: shells and TUI processes phones hold open (never their input or output). */
@Controller('/console/api/terminal')
export class TerminalConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly log: EventLog,
    private readonly clock: Clock,
  ) {
    features.add({ id: 'terminal', title: 'Terminal', order: 50 });
  }

  @Get()
  @Auth('loopback')
  view() {
    const t = this.log.models.terminal;
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      shells: t.allShells().map((s) => ({
        shell_id: s.shellId,
        session_name: s.sessionName,
        token_prefix: s.tokenPrefix,
        device_id: s.deviceId,
        pid: s.pid,
        shell: s.shell,
        cols: s.cols,
        rows: s.rows,
        opened_at: epoch(s.openedAt),
        attached: s.connId !== null,
        grace_until: epoch(s.graceUntil),
      })),
      tuis: t
        .allTuis()
        .map((u) => ({ tui_id: u.tuiId, token_prefix: u.tokenPrefix, pid: u.pid, program: u.program, started_at: epoch(u.startedAt) })),
    };
  }
}
