import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { actorOf, clientNames, DESKTOP_TOOL_RE, DomainError, type DesktopClient, type Principal } from '@svc/domain';
import type { DesktopRequester } from '@svc/events';
import type { FastifyReply } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { Auth, Caller } from '../common/auth';
import { CommandLoop } from '../common/command-loop';
import type { RelayConfig } from '../common/config';
import { RELAY_CONFIG } from '../common/tokens';
import { DesktopService } from './desktop.service';

/** A tool call's arguments: the host's tools send a few KiB (a file write's content is the largest). */
const DESKTOP_BODY_LIMIT = 8 * 1024 * 1024;

const DECISION: Record<string, string> = {
  pending: 'pending',
  ok: 'executed',
  tool_error: 'error',
  timeout: 'timeout',
  client_gone: 'error',
  send_failed: 'error',
};

/**
 * `/desktop/_ping`, `/desktop/health`, `/desktop/{tool}` (spec 4.6): the agent host's desktop tools on
 * loopback (the reference's callers send no bearer), or a caller with the desktop grant. A bearer sent
 * from loopback is checked too (the host's `DESKTOP_RELAY_TOKEN`), so a stale token is refused, not ignored.
 */
@Controller('/desktop')
export class DesktopController {
  constructor(
    private readonly desktop: DesktopService,
    private readonly log: CommandLoop,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  /**
   * Readiness for the host's tool checks (they expose a tool only on a 200): 503 while no client is
   * connected, or (with `?tool=`) none serves that tool; `?device=` asks about one client.
   */
  @Get('/_ping')
  @Auth('loopback-or-paired', 'desktop', { bearerOnLoopback: true })
  ping(@Query('tool') tool: unknown, @Query('device') device: unknown, @Res({ passthrough: true }) reply: FastifyReply) {
    const targets = this.log.models.desktop.targets();
    const name = typeof tool === 'string' && tool.trim() ? tool.trim() : null;
    const selector = typeof device === 'string' && device.trim() ? device.trim() : null;
    if (targets.length === 0) {
      void reply.status(503);
      return { ok: false, error: 'no desktop client is connected', code: 'desktop.no_client' };
    }
    if (name || selector) {
      const pool = selector
        ? targets.filter((c) => [c.deviceId, c.deviceName, c.host].some((v) => v?.toLowerCase() === selector.toLowerCase()))
        : targets;
      if (pool.length === 0) {
        void reply.status(503);
        return { ok: false, error: `no connected desktop matches "${selector!.slice(0, 64)}"`, code: 'desktop.unknown_device' };
      }
      if (name && !pool.some((c) => this.desktop.toolsOf(c.connId)?.includes(name))) {
        void reply.status(503);
        return { ok: false, error: `no connected desktop serves "${name.slice(0, 64)}"`, code: 'desktop.tool_not_advertised' };
      }
    }
    return { ok: true, clients: targets.length };
  }

  /** Always 200 (to loopback): who is connected, what they serve, and the latest calls (never their arguments). */
  @Get('/health')
  @Auth('loopback-or-paired', 'desktop', { bearerOnLoopback: true })
  health() {
    const m = this.log.models.desktop;
    const all = m.all();
    const targets = m.targets();
    const latest = targets.at(-1) ?? null;
    const seen = all.map((c) => this.desktop.lastSeenAt(c.connId)).filter((x): x is number => x !== null);
    return {
      connected: targets.length > 0,
      advertised_tools: [...new Set(targets.flatMap((c) => this.desktop.toolsOf(c.connId) ?? []))].sort(),
      pending_commands: this.desktop.inFlight,
      last_seen_at: seen.length ? Math.max(...seen) / 1000 : null,
      host: latest?.host ?? null,
      platform: latest?.platform ?? null,
      version: latest?.version ?? null,
      computer_use: latest ? { enabled: latest.computerUse } : null,
      clients: all.map((c) => this.clientView(c)),
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

  /**
   * A tool call. The body is the tool's arguments (a JSON object); `device` (or `device_id`) picks the
   * client and is not forwarded. 200 with the client's answer (`ok`, `result` or `error`) and `target`;
   * 503 no client, 409 several and none picked, 404 unknown device or tool not served, 504 no answer
   * in time, 502 the client left mid-call.
   */
  @Post('/:tool')
  @Auth('loopback-or-paired', 'desktop', { bearerOnLoopback: true, bodyLimit: DESKTOP_BODY_LIMIT })
  @HttpCode(200)
  async call(@Param('tool') tool: string, @Body() body: unknown, @Caller() caller: Principal, @Headers() headers: IncomingHttpHeaders) {
    if (!DESKTOP_TOOL_RE.test(tool))
      throw new DomainError(
        'validation_failed',
        'invalid',
        `"${tool.slice(0, 64)}" is not a tool name (a-z, 0-9 and _, starting with a letter, at most 64)`,
      );
    if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body)))
      throw new DomainError('validation_failed', 'invalid', 'the body is the tool arguments, a JSON object');
    const args = { ...((body as Record<string, unknown> | null) ?? {}) };
    const raw = args.device ?? args.device_id;
    if (raw !== undefined && raw !== null && typeof raw !== 'string')
      throw new DomainError('validation_failed', 'invalid', 'device must be a string (a device_id or name)');
    delete args.device;
    delete args.device_id;
    const selector = typeof raw === 'string' && raw.trim() ? raw.trim() : null;
    const r = await this.desktop.dispatch(tool, args, selector, actorOf(caller), this.requesterOf(caller, headers));
    return r.body;
  }

  /**
   * Who asks, for a computer-use control session: the host's tool names its chat session, run and profile
   * in `X-Svc-Relay-Chat-Session`, `-Run-Id`, `-Profile` (the `X-Hermes-Relay-*` spelling too; the reference
   * tool's desktop_tool.py). The requester is the caller the relay authenticated: a bearer's paired device,
   * else (the operator's loopback, the agent's own tool) the agent's chat session, `<brand>-agent:<chat>`.
   * Without a run there is no control session (the client then uses its own compatibility mode).
   */
  private requesterOf(caller: Principal, headers: IncomingHttpHeaders): DesktopRequester | null {
    const header = (name: string): string | null => {
      const raw = headers[`x-svc-relay-${name}`] ?? headers[`x-hermes-relay-${name}`];
      const v = (Array.isArray(raw) ? raw[0] : raw)
        ?.replace(/[\x00-\x1f\x7f]/g, '')
        .trim()
        .slice(0, 256);
      return v ? v : null;
    };
    const runId = header('run-id');
    const chatSessionId = header('chat-session');
    if (!runId) return null;
    const requesterDeviceId =
      caller.kind === 'device'
        ? caller.deviceId || `device:${caller.tokenPrefix}`
        : chatSessionId
          ? `${clientNames(this.config.clientSpelling).brand}-agent:${chatSessionId}`
          : null;
    return requesterDeviceId ? { requesterDeviceId, chatSessionId, runId, profile: header('profile') } : null;
  }

  private clientView(c: DesktopClient) {
    const w = c.workspace;
    return {
      device_id: c.deviceId || null,
      device_name: c.deviceName || null,
      serving: c.toolsDigest !== null,
      advertised_tools: this.desktop.toolsOf(c.connId) ?? [],
      tools_digest: c.toolsDigest,
      last_seen_at: ((s) => (s === null ? null : s / 1000))(this.desktop.lastSeenAt(c.connId)),
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
}
