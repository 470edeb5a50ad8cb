import type {
  DesktopActiveEditor,
  DesktopClientReported,
  DesktopContextReported,
  DesktopControlSessionEnded,
  DesktopControlSessionStarted,
  DesktopRequester,
  DesktopWorkspace,
  NewEvent,
} from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';
import type { ControlSession, DesktopClient } from './desktop.projection';

/** Tool names: what the desktop CLI and the host's tools use (`desktop_read_file`, `desktop_adb_shell`...). */
export const DESKTOP_TOOL_RE = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_TOOLS = 256;

/** A `desktop.status` after validation: the tool list (kept by the relay in memory, per connection) and identity. */
export type DesktopStatus = Omit<DesktopReport, 'toolsDigest' | 'toolCount'> & { tools: string[] };

/** What `desktop.client_reported` records of a status: the tool list only as its digest and length. */
export type DesktopReport = Omit<DesktopClientReported['data'], 'connId' | 'tokenPrefix' | 'deviceId' | 'deviceName' | 'tools'> & {
  deviceId: string | null;
  deviceName: string | null;
};

/** A text a desktop client reports: trimmed, cut to `max`, control characters removed; null when not a string or blank. */
export function reportedText(v: unknown, max: number): string | null {
  return typeof v === 'string' && v.trim() !== ''
    ? v
        .trim()
        .slice(0, max)
        .replace(/[\x00-\x1f\x7f]/g, '')
    : null;
}

/**
 * `desktop.status` (the CLI's: advertised_tools, device_id, device_name, host, platform, version, computer_use...).
 * Read here, not by a frame DTO as `workspace` and `active_editor` are: it carries up to 256 tool names and is
 * restated every 30 s, or as often as a client likes (DesktopService says what a DTO costs).
 */
export function parseDesktopStatus(p: Record<string, unknown>): { ok: true; value: DesktopStatus } | { ok: false; message: string } {
  const tools = p.advertised_tools;
  if (tools !== undefined && !Array.isArray(tools)) return { ok: false, message: 'desktop.status: advertised_tools must be a list of tool names' };
  const list = (tools ?? []) as unknown[];
  if (list.length > MAX_TOOLS) return { ok: false, message: `desktop.status: at most ${MAX_TOOLS} advertised tools` };
  const bad = list.find((t) => typeof t !== 'string' || !DESKTOP_TOOL_RE.test(t));
  if (bad !== undefined) return { ok: false, message: `desktop.status: "${String(bad).slice(0, 64)}" is not a tool name (a-z, 0-9, _; at most 64)` };
  return {
    ok: true,
    value: {
      tools: [...new Set(list as string[])].sort(),
      deviceId: reportedText(p.device_id, 128),
      deviceName: reportedText(p.device_name, 128) ?? reportedText(p.host, 128),
      host: reportedText(p.host, 128),
      platform: reportedText(p.platform, 32),
      version: reportedText(p.version, 32),
      computerUse: typeof p.computer_use === 'object' && p.computer_use !== null && (p.computer_use as { enabled?: unknown }).enabled === true,
    },
  };
}

/** The text `toolsDigest` is the SHA-256 of (hex): the sorted, de-duplicated list as JSON. */
export function canonicalToolList(tools: readonly string[]): string {
  return JSON.stringify([...new Set(tools)].sort());
}

/**
 * The client's identity is its paired session's (device id and name from `system/auth`), the status's
 * own only where the session has none. A status that changes nothing the relay records is not an event
 * (the CLI repeats it every 30 s; a hostile client may repeat it every millisecond).
 */
export function reportDesktopClient(
  models: ReadModels,
  conn: { connId: string; tokenPrefix: string; deviceId: string; deviceName: string },
  st: DesktopReport,
): NewEvent<DesktopClientReported>[] {
  const known = (v: string) => v !== '' && !['unknown', 'none', 'null'].includes(v.toLowerCase());
  const data: DesktopClientReported['data'] = {
    connId: conn.connId,
    tokenPrefix: conn.tokenPrefix,
    deviceId: known(conn.deviceId) ? conn.deviceId : (st.deviceId ?? conn.connId),
    deviceName: known(conn.deviceName) ? conn.deviceName : (st.deviceName ?? 'desktop'),
    toolsDigest: st.toolsDigest,
    toolCount: st.toolCount,
    host: st.host,
    platform: st.platform,
    version: st.version,
    computerUse: st.computerUse,
  };
  const was = models.desktop.client(conn.connId);
  if (
    was?.toolsDigest === data.toolsDigest &&
    was.toolCount === data.toolCount &&
    was.deviceId === data.deviceId &&
    was.deviceName === data.deviceName &&
    was.host === data.host &&
    was.platform === data.platform &&
    was.version === data.version &&
    was.computerUse === data.computerUse
  )
    return [];
  return [{ type: 'desktop.client_reported', data }];
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 1e9 ? v : null);

/** `git_status_summary` of a `workspace`: the counts that are whole numbers; not an object: none. */
export function reportedGitStatus(v: unknown): DesktopWorkspace['gitStatus'] {
  if (typeof v !== 'object' || v === null) return null;
  const g = v as Record<string, unknown>;
  return {
    staged: count(g.staged) ?? 0,
    modified: count(g.modified) ?? 0,
    untracked: count(g.untracked) ?? 0,
    ahead: count(g.ahead),
    behind: count(g.behind),
  };
}

export function reportDesktopContext(
  models: ReadModels,
  conn: { connId: string; tokenPrefix: string },
  report: { kind: 'workspace'; workspace: DesktopWorkspace } | { kind: 'active_editor'; activeEditor: DesktopActiveEditor },
): NewEvent<DesktopContextReported>[] {
  const was = models.desktop.client(conn.connId);
  const same =
    report.kind === 'workspace'
      ? JSON.stringify(was?.workspace) === JSON.stringify(report.workspace)
      : JSON.stringify(was?.activeEditor) === JSON.stringify(report.activeEditor);
  if (was && same) return [];
  return [{ type: 'desktop.context_reported', data: { connId: conn.connId, tokenPrefix: conn.tokenPrefix, ...report } }];
}

const fold = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * The clients `selector` names: by device id or name, or its host, exactly (case aside) or with everything but
 * letters and digits ignored (`"axiom desktop"` = `AXIOM-DESKTOP`). The one rule of a call's `device` and of
 * the readiness check before it (`GET /desktop/_ping?device=`).
 */
export function desktopsMatching(targets: readonly DesktopClient[], selector: string): DesktopClient[] {
  const s = selector.toLowerCase();
  return targets.filter((c) =>
    [c.deviceId, c.deviceName, c.host].some(
      (v) => v !== null && v !== '' && (v.toLowerCase() === s || (fold(v) !== '' && fold(v) === fold(selector))),
    ),
  );
}

/**
 * Which client a call goes to: the one `selector` names (desktopsMatching). With no selector there must be exactly
 * one client: with several the call is refused rather than sent to a guess. The client must advertise the tool
 * (`toolsOf`: the list its connection last sent).
 */
export function pickDesktopTarget(
  models: ReadModels,
  tool: string,
  selector: string | null,
  toolsOf: (connId: string) => readonly string[] | null,
): DesktopClient {
  const targets = models.desktop.targets();
  const label = (c: DesktopClient) => `${c.deviceName} (${c.deviceId})`;
  if (targets.length === 0)
    throw new DomainError(
      'desktop.no_client',
      'unavailable',
      'no desktop client is connected: start the desktop CLI (its daemon, or a shell that serves tools) and pair it with this relay',
    );
  let target: DesktopClient;
  if (selector) {
    const hits = desktopsMatching(targets, selector);
    if (hits.length === 0)
      throw new DomainError(
        'desktop.unknown_device',
        'not_found',
        `no connected desktop matches "${selector.slice(0, 64)}"; connected: ${targets.map(label).join(', ')}`,
        {
          devices: targets.map((c) => ({ device_id: c.deviceId, device_name: c.deviceName })),
        },
      );
    if (hits.length > 1)
      throw new DomainError(
        'desktop.ambiguous_device',
        'conflict',
        `"${selector.slice(0, 64)}" matches ${hits.length} desktops; name one by its device_id: ${hits.map(label).join(', ')}`,
        {
          devices: hits.map((c) => ({ device_id: c.deviceId, device_name: c.deviceName })),
        },
      );
    target = hits[0];
  } else {
    if (targets.length > 1)
      throw new DomainError(
        'desktop.ambiguous_device',
        'conflict',
        `${targets.length} desktop clients are connected: pass "device" (a device_id or name) to pick one: ${targets.map(label).join(', ')}`,
        { devices: targets.map((c) => ({ device_id: c.deviceId, device_name: c.deviceName })) },
      );
    target = targets[0];
  }
  const tools = toolsOf(target.connId);
  // Its socket closed and its disconnect is not projected yet: the caller hears that it left, not that a tool is missing.
  if (tools === null) throw new DomainError('desktop.client_gone', 'upstream', `${label(target)} disconnected before the call was sent`);
  if (!tools.includes(tool))
    throw new DomainError('desktop.tool_not_advertised', 'not_found', `${label(target)} does not serve "${tool}"`, {
      advertised_tools: tools,
    });
  return target;
}

/** How long a call may take (the reference's): adb 300 s (approval plus a bounded operation), computer use 180 s (a human approval prompt), others 30 s. */
export function desktopTimeoutMs(tool: string, t: { defaultMs: number; computerUseMs: number; adbMs: number }): number {
  if (tool.startsWith('desktop_adb_')) return t.adbMs;
  if (tool.startsWith('desktop_computer_')) return t.computerUseMs;
  return t.defaultMs;
}

/** Control sessions live at most this long unused (the reference's 15 minutes), at most this many at once. */
export const CONTROL_SESSION_IDLE_MS = 15 * 60 * 1000;
export const CONTROL_SESSIONS_MAX = 256;

/**
 * The control session a computer-use call runs under: the live one of the same requester, chat, run,
 * profile and target (its use is recorded by the call itself), else a new one. A new run of the same
 * requester, chat and profile on the same target ends the previous run's session; past the cap the least
 * recently used ends. No requester or run: no session (the desktop CLI then runs the call in its own
 * compatibility mode, as under the reference relay).
 */
export function controlSessionFor(
  models: ReadModels,
  requester: DesktopRequester | null,
  target: DesktopClient,
  newId: string,
): { controlId: string | null; events: NewEvent<DesktopControlSessionStarted | DesktopControlSessionEnded>[] } {
  if (!requester) return { controlId: null, events: [] };
  const live = models.desktop.controlSessions();
  const sameSeat = (c: ControlSession) =>
    c.requesterDeviceId === requester.requesterDeviceId &&
    c.chatSessionId === requester.chatSessionId &&
    c.profile === requester.profile &&
    c.connId === target.connId;
  const current = live.find((c) => sameSeat(c) && c.runId === requester.runId);
  if (current) return { controlId: current.controlId, events: [] };
  const end = (c: ControlSession, reason: 'run_changed' | 'capacity'): NewEvent<DesktopControlSessionEnded> => ({
    type: 'desktop.control_session_ended',
    data: { controlId: c.controlId, connId: c.connId, targetDeviceId: c.targetDeviceId, reason },
  });
  const events: NewEvent<DesktopControlSessionStarted | DesktopControlSessionEnded>[] = live.filter(sameSeat).map((c) => end(c, 'run_changed'));
  const remaining = live.filter((c) => !sameSeat(c)).sort((a, b) => a.usedAt - b.usedAt);
  for (let i = 0; remaining.length - i >= CONTROL_SESSIONS_MAX; i++) events.push(end(remaining[i], 'capacity'));
  events.push({
    type: 'desktop.control_session_started',
    data: { controlId: newId, connId: target.connId, targetDeviceId: target.deviceId, ...requester },
  });
  return { controlId: newId, events };
}

/** The sweep: control sessions unused for CONTROL_SESSION_IDLE_MS. */
export function expireControlSessions(models: ReadModels, now: Date): NewEvent<DesktopControlSessionEnded>[] {
  return models.desktop
    .controlSessions()
    .filter((c) => now.getTime() - c.usedAt >= CONTROL_SESSION_IDLE_MS)
    .map((c) => ({
      type: 'desktop.control_session_ended' as const,
      data: { controlId: c.controlId, connId: c.connId, targetDeviceId: c.targetDeviceId, reason: 'idle' as const },
    }));
}
