// ── Desktop (`/console/api/desktop`): types only, re-exported by index.ts ──

// A relative path, not `@svc/events`: that index also holds the Node-side stores the browser build cannot type.
import type { DesktopOutcome } from '../../events/src/events/desktop.events';

/** What the client last said of its workspace (`workspace` frame); never file contents. */
export type DesktopWorkspaceView = {
  cwd: string | null;
  git_root: string | null;
  git_branch: string | null;
  repo_name: string | null;
  hostname: string | null;
  active_shell: string | null;
  git_status: { staged: number; modified: number; untracked: number; ahead: number | null; behind: number | null } | null;
};

/** A desktop socket that said something on the `desktop` channel. */
export type DesktopClientRow = {
  conn_id: string;
  token_prefix: string;
  device_id: string;
  device_name: string;
  /** It advertised tools: calls may go to it. */
  serving: boolean;
  /** The tool names its last status advertised (kept in memory, not in the log). */
  tools: string[];
  host: string | null;
  platform: string | null;
  version: string | null;
  computer_use: boolean;
  /** When it connected (its socket's `phone.connected`), or null. */
  connected_at: number | null;
  reported_at: number;
  /** Its last frame on the desktop channel (the 30 s heartbeat), or null. */
  last_seen_at: number | null;
  workspace: DesktopWorkspaceView | null;
  /** The editor hint (where the user is working); its command line is never kept. */
  active_editor: { source: string; editor: string | null; cwd: string | null } | null;
};

/** One tool call: which tool, to whom, who asked, how it ended and how long it took. Never its arguments or result. */
export type DesktopCallRow = {
  request_id: string;
  tool: string;
  device_id: string;
  token_prefix: string;
  /** The log actor that asked: `operator` (the host's tools on loopback) or `device:<prefix>`. */
  requester: string;
  sent_at: number;
  outcome: DesktopOutcome | 'pending';
  duration_ms: number | null;
};

/** A live computer-use control session: one requester's run bound to one desktop. */
export type ControlSessionRow = {
  control_id: string;
  target_device_id: string;
  target_name: string | null;
  requester_device_id: string;
  chat_session_id: string | null;
  run_id: string;
  profile: string | null;
  started_at: number;
  used_at: number;
  /** When it ends unless used again (15 minutes idle). */
  idle_ends_at: number;
};

export type DesktopView = {
  ok: true;
  server_time: number;
  /** Live sessions holding the desktop grant (0: no desktop client can connect). */
  granted_sessions: number;
  clients: DesktopClientRow[];
  /** Calls sent and not yet answered. */
  in_flight: number;
  /** Every call's outcome, counted over the log. */
  outcomes: Record<string, number>;
  /** The latest calls, newest first. */
  calls: DesktopCallRow[];
  control_sessions: ControlSessionRow[];
};
