import { Controller, Get } from '@nestjs/common';
import type { DesktopClientRow, DesktopView } from '@svc/console-api';
import { CONTROL_SESSION_IDLE_MS, epoch, hasGrant, type DesktopClient } from '@svc/domain';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { DesktopService } from '../../desktop/desktop.service';
import { ConsoleFeatures } from '../console-features';

/** How many of the projection's latest calls (it keeps 100) the page lists. */
const CALLS_SHOWN = 50;

/**
 * Desktop page: desktop clients (the desktop CLI's daemon or shell) with their workspace, active editor
 * and tools, the latest tool calls (tool, target, outcome, duration: never arguments or results, which
 * the log never holds), and live computer-use control sessions.
 */
@Controller('/console/api/desktop')
export class DesktopConsoleController {
  constructor(
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
    private readonly desktop: DesktopService,
  ) {
    features.add({ id: 'desktop', title: 'Desktop', order: 55 });
  }

  @Get()
  @Auth('operator')
  view(): DesktopView {
    const now = this.clock.now();
    const m = this.loop.models;
    const clients = m.desktop.all();
    const nameOf = (deviceId: string) => clients.find((c) => c.deviceId === deviceId)?.deviceName ?? null;
    return {
      ok: true,
      server_time: epoch(now),
      granted_sessions: m.sessions.active(now).filter((s) => hasGrant(s, 'desktop', now)).length,
      clients: clients.map((c) => this.client(c)),
      in_flight: this.desktop.inFlight,
      outcomes: { ...m.desktop.outcomeCounts() },
      calls: m.desktop.recentDispatches(CALLS_SHOWN).map((d) => ({
        request_id: d.requestId,
        tool: d.tool,
        device_id: d.deviceId,
        token_prefix: d.tokenPrefix,
        requester: d.actor,
        sent_at: epoch(d.sentAt),
        outcome: d.outcome,
        duration_ms: d.durationMs,
      })),
      control_sessions: m.desktop.controlSessions().map((c) => ({
        control_id: c.controlId,
        target_device_id: c.targetDeviceId,
        target_name: nameOf(c.targetDeviceId),
        requester_device_id: c.requesterDeviceId,
        chat_session_id: c.chatSessionId,
        run_id: c.runId,
        profile: c.profile,
        started_at: epoch(c.startedAt),
        used_at: epoch(c.usedAt),
        idle_ends_at: epoch(c.usedAt + CONTROL_SESSION_IDLE_MS),
      })),
    };
  }

  private client(c: DesktopClient): DesktopClientRow {
    const w = c.workspace;
    const seen = this.desktop.lastSeenAt(c.connId);
    const socket = this.loop.models.connections.all().find((x) => x.connId === c.connId);
    // A socket that sent a workspace before its status has no identity of its own yet: its session's.
    const session = this.loop.models.sessions.byTokenPrefix(c.tokenPrefix);
    return {
      conn_id: c.connId,
      token_prefix: c.tokenPrefix,
      device_id: c.deviceId || session?.deviceId || '',
      device_name: c.deviceName || session?.deviceName || '',
      serving: c.toolsDigest !== null,
      tools: [...(this.desktop.toolsOf(c.connId) ?? [])],
      host: c.host,
      platform: c.platform ?? w?.platform ?? null,
      version: c.version,
      computer_use: c.computerUse,
      connected_at: socket ? epoch(socket.since) : null,
      reported_at: epoch(c.reportedAt),
      last_seen_at: seen === null ? null : epoch(seen),
      workspace: w && {
        cwd: w.cwd,
        git_root: w.gitRoot,
        git_branch: w.gitBranch,
        repo_name: w.repoName,
        hostname: w.hostname,
        active_shell: w.activeShell,
        git_status: w.gitStatus,
      },
      active_editor: c.activeEditor,
    };
  }
}
