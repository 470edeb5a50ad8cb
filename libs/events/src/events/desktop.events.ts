import type { Ev } from '../event';

/**
 * Desktop tools (spec 4.6): desktop clients (the desktop CLI's daemon, shell or chat) serve tools the
 * agent host calls through `/desktop/{tool}`. Tool arguments and results never enter the log: a dispatch
 * is recorded as its tool name, target, outcome and duration.
 */

/**
 * What a desktop client said about itself in `desktop.status`, written only when something recorded here
 * changed, and at most once a second per connection (the latest state at the end of the second). The
 * tool list itself is not recorded (a client may restate up to 256 names every frame): its SHA-256 digest
 * (`toolsDigest`, over the sorted list as JSON) and its length say whether and when it changed.
 */
export type DesktopClientReported = Ev<
  'desktop.client_reported',
  {
    connId: string;
    tokenPrefix: string;
    deviceId: string;
    deviceName: string;
    toolsDigest: string;
    toolCount: number;
    /** Older logs carried the list itself (read as its length; clients never outlive a restart). */
    tools?: string[];
    host: string | null;
    platform: string | null;
    version: string | null;
    /** The client advertises the experimental computer-use tools. */
    computerUse: boolean;
  }
>;

/** The client's workspace (`workspace`: cwd, git root and branch, repo) as it reported it. */
export type DesktopWorkspace = {
  cwd: string | null;
  gitRoot: string | null;
  gitBranch: string | null;
  repoName: string | null;
  hostname: string | null;
  platform: string | null;
  activeShell: string | null;
  gitStatus: { staged: number; modified: number; untracked: number; ahead: number | null; behind: number | null } | null;
};

/** The client's active-editor hint (`active_editor`): where the user is working. Its command line is not kept. */
export type DesktopActiveEditor = { source: string; editor: string | null; cwd: string | null };

export type DesktopContextReported = Ev<
  'desktop.context_reported',
  { connId: string; tokenPrefix: string } & (
    { kind: 'workspace'; workspace: DesktopWorkspace } | { kind: 'active_editor'; activeEditor: DesktopActiveEditor }
  )
>;

/** A tool call sent to a desktop client (`desktop.command`). `requester`: who asked (the log actor). */
export type DesktopCommandSent = Ev<
  'desktop.command_sent',
  {
    requestId: string;
    tool: string;
    connId: string;
    tokenPrefix: string;
    deviceId: string;
    timeoutMs: number;
    /** The computer-use control session the call was bound to (its last use keeps it alive). */
    controlId?: string;
  }
>;

/**
 * Who asked for a desktop call, as the host's tool says (its `X-<brand>-Relay-*` headers) and the relay
 * authenticates: the paired device of a bearer, else the agent's chat session on loopback.
 */
export type DesktopRequester = { requesterDeviceId: string; chatSessionId: string | null; runId: string; profile: string | null };

/**
 * A computer-use control session: the relay-owned identity that binds one requester's run to one target
 * desktop (the desktop CLI accepts `desktop_computer_*` calls only under it; desktop/src/tools/router.ts).
 */
export type DesktopControlSessionStarted = Ev<
  'desktop.control_session_started',
  { controlId: string; connId: string; targetDeviceId: string } & DesktopRequester
>;

/** `run_changed`: the same requester started another run; `idle`: unused for 15 minutes; `capacity`: the oldest of too many. */
export type DesktopControlSessionEnded = Ev<
  'desktop.control_session_ended',
  { controlId: string; connId: string; targetDeviceId: string; reason: 'run_changed' | 'idle' | 'capacity' }
>;

export type DesktopOutcome = 'ok' | 'tool_error' | 'timeout' | 'client_gone' | 'send_failed';

/** The call ended: the client answered (`ok`, or `tool_error` when it said `ok: false`), or it did not. */
export type DesktopCommandCompleted = Ev<
  'desktop.command_completed',
  { requestId: string; tool: string; tokenPrefix: string; outcome: DesktopOutcome; durationMs: number }
>;

export type DesktopEvent =
  | DesktopClientReported
  | DesktopContextReported
  | DesktopCommandSent
  | DesktopCommandCompleted
  | DesktopControlSessionStarted
  | DesktopControlSessionEnded;
