import { desktopsMatching, type DesktopClient, type ReadModels } from '@svc/domain';
import type { DesktopService } from './desktop.service';

/** The health view's word for each outcome (the reference's `decision`). */
const DECISION: Record<string, string> = {
  pending: 'pending',
  ok: 'executed',
  tool_error: 'error',
  timeout: 'timeout',
  client_gone: 'error',
  send_failed: 'error',
};

/**
 * Readiness for the host's tool checks (they expose a tool only on a 200): 503 while no client is
 * connected, or (with `tool`) none serves that tool; `device` asks about one client. The 503 is an
 * answer, not an error: the host polls it, and the operator's log does not hear of each one.
 */
export function desktopReadiness(
  models: ReadModels,
  desktop: DesktopService,
  tool: string | null,
  device: string | null,
): { status: 200 | 503; body: Record<string, unknown> } {
  const unavailable = (code: string, error: string) => ({ status: 503 as const, body: { ok: false, error, code } });
  const targets = models.desktop.targets();
  if (targets.length === 0) return unavailable('desktop.no_client', 'no desktop client is connected');
  if (tool || device) {
    const pool = device ? desktopsMatching(targets, device) : targets;
    if (pool.length === 0) return unavailable('desktop.unknown_device', `no connected desktop matches "${device!.slice(0, 64)}"`);
    if (tool && !pool.some((c) => desktop.toolsOf(c.connId)?.includes(tool)))
      return unavailable('desktop.tool_not_advertised', `no connected desktop serves "${tool.slice(0, 64)}"`);
  }
  return { status: 200, body: { ok: true, clients: targets.length } };
}

/** Who is connected, what they serve, and the latest calls (never their arguments). */
export function desktopHealth(models: ReadModels, desktop: DesktopService) {
  const m = models.desktop;
  const all = m.all();
  const targets = m.targets();
  const latest = targets.at(-1) ?? null;
  const seen = all.map((c) => desktop.lastSeenAt(c.connId)).filter((x): x is number => x !== null);
  return {
    connected: targets.length > 0,
    advertised_tools: [...new Set(targets.flatMap((c) => desktop.toolsOf(c.connId) ?? []))].sort(),
    pending_commands: desktop.inFlight,
    last_seen_at: seen.length ? Math.max(...seen) / 1000 : null,
    host: latest?.host ?? null,
    platform: latest?.platform ?? null,
    version: latest?.version ?? null,
    computer_use: latest ? { enabled: latest.computerUse } : null,
    clients: all.map((c) => clientView(c, desktop)),
    recent_commands: m.recentDispatches(20).map((d) => ({
      request_id: d.requestId,
      tool: d.tool,
      device_id: d.deviceId,
      sent_at: d.sentAt,
      decision: DECISION[d.outcome] ?? d.outcome,
      outcome: d.outcome,
      duration_ms: d.durationMs,
    })),
    outcomes: m.outcomeCounts(),
  };
}

function clientView(c: DesktopClient, desktop: DesktopService) {
  const w = c.workspace;
  return {
    device_id: c.deviceId || null,
    device_name: c.deviceName || null,
    serving: c.toolsDigest !== null,
    advertised_tools: desktop.toolsOf(c.connId) ?? [],
    tools_digest: c.toolsDigest,
    last_seen_at: ((s) => (s === null ? null : s / 1000))(desktop.lastSeenAt(c.connId)),
    host: c.host,
    platform: c.platform,
    version: c.version,
    computer_use: c.computerUse,
    workspace: w && {
      cwd: w.cwd,
      git_root: w.gitRoot,
      git_branch: w.gitBranch,
      repo_name: w.repoName,
      hostname: w.hostname,
      platform: w.platform,
      active_shell: w.activeShell,
      git_status_summary: w.gitStatus,
    },
    active_editor: c.activeEditor,
  };
}
