import type { ReadModels } from '@svc/domain';
import type { ShellProcess } from './shell-process';
import { epoch } from '@svc/domain';

/** The name the Devices page shows for a shell's device; its id when the session is gone from the model. */
export function deviceNameOf(models: ReadModels, tokenPrefix: string, deviceId: string): string {
  return models.sessions.byTokenPrefix(tokenPrefix)?.deviceName || deviceId;
}

/**
 * Remote shells and TUI gateways as the operator sees them, on `GET /terminal/shells` and the console's
 * terminal page alike (never their input or output). `live` adds what only the running process knows:
 * its current size and whether its output is paused for a slow phone.
 */
export function terminalView(models: ReadModels, live: readonly ShellProcess[]) {
  const running = new Map(live.map((s) => [s.spec.shellId, s]));
  return {
    shells: models.terminal.allShells().map((s) => ({
      shell_id: s.shellId,
      session_name: s.sessionName,
      token_prefix: s.tokenPrefix,
      device_id: s.deviceId,
      device_name: deviceNameOf(models, s.tokenPrefix, s.deviceId),
      pid: s.pid,
      shell: s.shell,
      cols: running.get(s.shellId)?.cols ?? s.cols,
      rows: running.get(s.shellId)?.rows ?? s.rows,
      attached: s.connId !== null,
      opened_at: epoch(s.openedAt),
      detached_at: epoch(s.detachedAt),
      grace_expires_at: epoch(s.graceUntil),
      paused: running.get(s.shellId)?.paused ?? false,
    })),
    tuis: models.terminal.allTuis().map((t) => ({
      tui_id: t.tuiId,
      token_prefix: t.tokenPrefix,
      pid: t.pid,
      program: t.program,
      started_at: epoch(t.startedAt),
    })),
  };
}
