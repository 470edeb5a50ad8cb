import type { NewEvent, ShellOpened, TerminalCloseReason, TerminalEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';
import type { OpenShell } from './terminal.projection';

/** Issue 3: at most this many shells per paired device (session), attached or detached. */
export const MAX_SHELLS_PER_DEVICE = 4;
export const DEFAULT_SESSION_NAME = 'main';
const SESSION_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `session_name` of a terminal frame: omitted means `main`; otherwise 1-64 of [A-Za-z0-9._-]. */
export function sessionNameOf(value: unknown): string {
  if (value === undefined || value === null || value === '') return DEFAULT_SESSION_NAME;
  if (typeof value !== 'string' || !SESSION_NAME_RE.test(value)) {
    throw new DomainError(
      'terminal.bad_session_name',
      'invalid',
      'session_name: 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit',
    );
  }
  return value;
}

export type TermSize = { cols: number; rows: number };
export const MAX_COLS = 1000;
export const MAX_ROWS = 500;

/** `cols` or `rows` of a terminal frame (attach, resize): an integer from 1 to 1000 (cols) or 500 (rows). */
export function termDimension(name: 'cols' | 'rows', value: unknown): number {
  const max = name === 'cols' ? MAX_COLS : MAX_ROWS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new DomainError('terminal.bad_size', 'invalid', `${name}: an integer from 1 to ${max} is required`);
  }
  return value;
}

/** Checked before a pty is spawned, and again (against the decision state) when the open is recorded. */
export function assertCanOpenShell(m: ReadModels, tokenPrefix: string, sessionName: string): void {
  if (m.terminal.shellByName(tokenPrefix, sessionName)) {
    throw new DomainError('terminal.session_exists', 'conflict', `a shell named "${sessionName}" is already open for this device`);
  }
  const open = m.terminal.shellsOf(tokenPrefix).length;
  if (open >= MAX_SHELLS_PER_DEVICE) {
    throw new DomainError(
      'terminal.limit',
      'conflict',
      `this device already has ${open} shells open (at most ${MAX_SHELLS_PER_DEVICE}); kill one or re-attach to it`,
      { limit: MAX_SHELLS_PER_DEVICE },
    );
  }
}

export type OpenShellInput = ShellOpened;

export function openShell(m: ReadModels, input: OpenShellInput): NewEvent<TerminalEvent>[] {
  if (!m.sessions.byTokenPrefix(input.tokenPrefix)) {
    throw new DomainError('terminal.session_gone', 'unauthorized', 'the session was revoked or expired');
  }
  assertCanOpenShell(m, input.tokenPrefix, input.sessionName);
  return [{ type: 'terminal.opened', data: { ...input } }];
}

export function reattachShell(m: ReadModels, shellId: string, connId: string): NewEvent<TerminalEvent>[] {
  const s = m.terminal.shell(shellId);
  if (!s) throw new DomainError('terminal.not_found', 'not_found', 'that shell has ended');
  return [{ type: 'terminal.reattached', data: { shellId, tokenPrefix: s.tokenPrefix, connId } }];
}

export function detachShell(
  m: ReadModels,
  shellId: string,
  reason: 'detach' | 'disconnected',
  graceSeconds: number,
  now: Date,
): NewEvent<TerminalEvent>[] {
  const s = m.terminal.shell(shellId);
  if (!s) return [];
  const graceUntil = new Date(now.getTime() + graceSeconds * 1000).toISOString();
  return [{ type: 'terminal.detached', data: { shellId, tokenPrefix: s.tokenPrefix, reason, graceUntil } }];
}

/** Recorded once the process is gone (so the exit code is known); nothing when already recorded. */
export function closeShell(
  m: ReadModels,
  shellId: string,
  reason: TerminalCloseReason,
  exit: { exitCode: number | null; signal: number | null },
): NewEvent<TerminalEvent>[] {
  const s: OpenShell | undefined = m.terminal.shell(shellId);
  if (!s) return [];
  return [
    {
      type: 'terminal.closed',
      data: { shellId, sessionName: s.sessionName, tokenPrefix: s.tokenPrefix, pid: s.pid, reason, exitCode: exit.exitCode, signal: exit.signal },
    },
  ];
}

export type StartTuiInput = { tuiId: string; tokenPrefix: string; connId: string; pid: number; program: string; cols: number; rows: number };

export function startTui(m: ReadModels, input: StartTuiInput): NewEvent<TerminalEvent>[] {
  if (!m.sessions.byTokenPrefix(input.tokenPrefix)) {
    throw new DomainError('terminal.session_gone', 'unauthorized', 'the session was revoked or expired');
  }
  return [{ type: 'tui.started', data: { ...input } }];
}

export function stopTui(
  m: ReadModels,
  tuiId: string,
  reason: TerminalCloseReason,
  exit: { exitCode: number | null; signal: number | null },
): NewEvent<TerminalEvent>[] {
  const t = m.terminal.tui(tuiId);
  if (!t) return [];
  return [{ type: 'tui.stopped', data: { tuiId, tokenPrefix: t.tokenPrefix, pid: t.pid, reason, exitCode: exit.exitCode, signal: exit.signal } }];
}
