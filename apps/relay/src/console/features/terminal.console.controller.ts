import { Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { EndShellAnswer, RecordingsView, TerminalView } from '@svc/console-api';
import { epoch } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { deviceNameOf, terminalView } from '../../terminal/terminal-views';
import { RecordingsService } from '../../terminal/recordings.service';
import { TerminalService } from '../../terminal/terminal.service';
import { ConsoleFeatures } from '../console-features';
import { RecordingIdParam, ShellIdParam } from './console.dto';

/**
 * Terminal page: shells and TUI processes phones hold open, End shell, and the shells' recordings
 * (RELAY_TERMINAL_RECORDING): their list, and one served whole for the page's player.
 */
@Controller('/console/api/terminal')
export class TerminalConsoleController {
  constructor(
    private readonly terminal: TerminalService,
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly recordings: RecordingsService,
  ) {
    features.add({ id: 'terminal', title: 'Terminal', order: 50 });
  }

  @Get()
  @Auth('operator')
  view(): TerminalView {
    return { ok: true, server_time: epoch(this.clock.now()), ...terminalView(this.loop.models, this.terminal.shells()) };
  }

  /** Answered once the shell is gone and its `terminal.closed` (actor `operator`) is durable. */
  @Post('/shells/:shell_id/end')
  @Auth('operator')
  @HttpCode(200)
  async end(@Param() p: ShellIdParam): Promise<EndShellAnswer> {
    const exit = await this.terminal.killByOperator(p.shell_id);
    return { ok: true, shell_id: p.shell_id, exit_code: exit.exitCode, signal: exit.signal };
  }

  @Get('/recordings')
  @Auth('operator')
  listRecordings(): RecordingsView {
    const s = this.recordings.settings;
    return {
      ok: true,
      server_time: epoch(this.clock.now()),
      settings: { enabled: s.enabled, input: s.input, max_bytes: s.maxBytes, total_max_bytes: s.totalBytes },
      total_bytes: this.loop.models.terminalRecordings.totalBytes(),
      recordings: this.recordings.list().map((r) => ({
        recording_id: r.recordingId,
        shell_id: r.shellId,
        session_name: r.sessionName,
        token_prefix: r.tokenPrefix,
        device_id: r.deviceId,
        device_name: r.tokenPrefix ? deviceNameOf(this.loop.models, r.tokenPrefix, r.deviceId) : '',
        started_at: epoch(r.startedAt),
        duration_ms: r.durationMs,
        size_bytes: r.sizeBytes,
        sha256: r.sha256,
        sealed: r.sealedWith !== null,
        input: r.input,
        truncated: r.truncated,
        stopped: r.stopped,
        recovered: r.recovered,
      })),
    };
  }

  /** A saved recording as asciicast (opened when sealed), by its listed id only (the path is the relay's own). */
  @Get('/recordings/:recording_id')
  @Auth('operator')
  recording(@Param() p: RecordingIdParam, @Res() reply: FastifyReply): FastifyReply {
    const { body, size } = this.recordings.open(p.recording_id);
    return reply
      .type('application/x-asciicast')
      .header('content-length', size)
      .header('content-disposition', `inline; filename="${p.recording_id}.cast"`)
      .send(body);
  }
}
