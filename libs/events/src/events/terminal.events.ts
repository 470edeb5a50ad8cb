import type { Ev } from '../event';

/**
 * Remote shells (terminal channel) and TUI gateway processes (tui channel). Both are ephemeral: they
 * reset at `relay.started` (no child survives a relay restart). Input and output never enter an event.
 */

/** Why a shell or TUI process ended. */
export type TerminalCloseReason =
  | 'exited' // the process ended on its own
  | 'killed' // terminal.kill from the phone, or the operator
  | 'grace_expired' // detached longer than the grace period
  | 'revoked' // the session was revoked (or replaced by a re-pairing)
  | 'session_expired'
  | 'grant_expired' // the channel's grant ran out
  | 'grant_removed' // a PATCH dropped or shortened the grant to now
  | 'detached' // tui.detach (a TUI does not outlive its attachment)
  | 'disconnected' // the phone socket closed (TUI only)
  | 'shutdown'; // the relay is stopping

/** A shell the relay started for a phone. */
export type ShellOpened = {
  shellId: string;
  sessionName: string;
  tokenPrefix: string;
  deviceId: string;
  connId: string;
  pid: number;
  shell: string;
  cols: number;
  rows: number;
};
export type TerminalOpened = Ev<'terminal.opened', ShellOpened>;
/** A detached shell keeps running until `graceUntil` (ISO), then the sweep ends it. */
export type TerminalDetached = Ev<
  'terminal.detached',
  { shellId: string; tokenPrefix: string; reason: 'detach' | 'disconnected'; graceUntil: string }
>;
export type TerminalReattached = Ev<'terminal.reattached', { shellId: string; tokenPrefix: string; connId: string }>;
export type TerminalClosed = Ev<
  'terminal.closed',
  {
    shellId: string;
    sessionName: string;
    tokenPrefix: string;
    pid: number;
    reason: TerminalCloseReason;
    exitCode: number | null;
    signal: number | null;
  }
>;

export type TuiStarted = Ev<
  'tui.started',
  { tuiId: string; tokenPrefix: string; connId: string; pid: number; program: string; cols: number; rows: number }
>;
export type TuiStopped = Ev<
  'tui.stopped',
  { tuiId: string; tokenPrefix: string; pid: number; reason: TerminalCloseReason; exitCode: number | null; signal: number | null }
>;

/**
 * Why a live recording stopped growing while its shell went on: its own cap (RELAY_TERMINAL_RECORDING_MAX_MB),
 * the total cap with only live recordings left to count (RELAY_TERMINAL_RECORDINGS_TOTAL_MB), the disk guard's
 * reserve (RELAY_DISK_MIN_FREE_MB), a disk that stopped answering, a write that failed, or its device's
 * content forgotten.
 */
export type RecordingStopReason = 'max_bytes' | 'total_bytes' | 'disk_low' | 'disk_stalled' | 'write_failed' | 'forgotten';

/**
 * A shell's asciicast recording (RELAY_TERMINAL_RECORDING) is complete on disk, flushed and fsynced:
 * `<home>/relay/recordings/<recordingId>.cast`, `sizeBytes` long with SHA-256 `sha256` (hex), so the chain
 * vouches for the file. `sealedWith`: the data key its content is sealed under (the shell's device, the hour
 * it started; absent in older logs, whose files are plain asciicast), so forgetting that key forgets it.
 * `input`: typed input was recorded too; `truncated`: output past the cap was not.
 * `stopped`: why the recording stopped before its shell ended (absent in older logs and when it did not).
 * `recovered`: found at start-up without this event (the relay stopped without ending the shell).
 * Never the recording's content.
 */
export type TerminalRecordingSaved = Ev<
  'terminal.recording_saved',
  {
    recordingId: string;
    shellId: string;
    sessionName: string;
    tokenPrefix: string;
    deviceId: string;
    startedAt: string;
    durationMs: number;
    sizeBytes: number;
    sha256: string;
    sealedWith?: string;
    input: boolean;
    truncated: boolean;
    stopped?: RecordingStopReason;
    recovered?: boolean;
  }
>;
/**
 * The relay deleted a recording: `space`, the oldest out past RELAY_TERMINAL_RECORDINGS_TOTAL_MB; `missing`,
 * its file was gone at start; `forgotten`, its device's content was forgotten (`personal.forgotten`).
 */
export type TerminalRecordingRemoved = Ev<'terminal.recording_removed', { recordingId: string; reason: 'space' | 'missing' | 'forgotten' }>;

export type TerminalEvent =
  | TerminalOpened
  | TerminalDetached
  | TerminalReattached
  | TerminalClosed
  | TerminalRecordingSaved
  | TerminalRecordingRemoved
  | TuiStarted
  | TuiStopped;
