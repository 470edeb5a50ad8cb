import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { actorOf, type Principal } from '@svc/domain';
import type { FastifyReply } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { Auth, Caller } from '../common/auth/auth';
import { CommandLoop } from '../common/loop/command-loop';
import type { RelayConfig } from '../common/config/relay-config';
import { RELAY_CONFIG } from '../common/auth/tokens';
import { desktopRequesterOf } from './desktop-requester';
import { desktopHealth, desktopReadiness } from './desktop-views';
import { DesktopPingQuery, DesktopToolCallDto, toolArguments } from './desktop.dto';
import { DesktopService } from './desktop.service';

/** A tool call's arguments: the host's tools send a few KiB (a file write's content is the largest). */
const DESKTOP_BODY_LIMIT = 8 * 1024 * 1024;

/**
 * `/desktop/_ping`, `/desktop/health`, `/desktop/{tool}` (spec 4.6): the agent host's desktop tools on
 * loopback (the reference's callers send no bearer), or a caller with the desktop grant. A bearer sent
 * from loopback is checked too (the host's `DESKTOP_RELAY_TOKEN`), so a stale token is refused, not ignored.
 */
@Controller('/desktop')
export class DesktopController {
  constructor(
    private readonly desktop: DesktopService,
    private readonly loop: CommandLoop,
    @Inject(RELAY_CONFIG) private readonly config: RelayConfig,
  ) {}

  /** Readiness for the host's tool checks: 200, or 503 naming what is missing (desktop-views.ts). */
  @Get('/_ping')
  @Auth('platform-or-paired', 'desktop', { bearerOnLoopback: true })
  ping(@Query() q: DesktopPingQuery, @Res({ passthrough: true }) reply: FastifyReply) {
    const r = desktopReadiness(this.loop.models, this.desktop, q.tool ?? null, q.device ?? null);
    void reply.status(r.status);
    return r.body;
  }

  /** Always 200 (to loopback): who is connected, what they serve, and the latest calls (never their arguments). */
  @Get('/health')
  @Auth('platform-or-paired', 'desktop', { bearerOnLoopback: true })
  health() {
    return desktopHealth(this.loop.models, this.desktop);
  }

  /**
   * A tool call. The body is the tool's arguments (a JSON object); `device` (or `device_id`) picks the
   * client and is not forwarded. 200 with the client's answer (`ok`, `result` or `error`) and `target`;
   * 503 no client, 409 several and none picked, 404 unknown device or tool not served, 504 no answer
   * in time, 502 the client left mid-call.
   */
  @Post('/:tool')
  @Auth('platform-or-paired', 'desktop', { bearerOnLoopback: true, bodyLimit: DESKTOP_BODY_LIMIT })
  @HttpCode(200)
  async call(
    @Param('tool') tool: string,
    @Body() call: DesktopToolCallDto,
    // Free-form by design: the arguments are the tool's own (the desktop client checks them); only the
    // selector is the relay's, read through DesktopToolCallDto above.
    @Body() args: Record<string, unknown> | undefined,
    @Caller() caller: Principal,
    @Headers() headers: IncomingHttpHeaders,
  ) {
    const requester = desktopRequesterOf(caller, headers, this.config.clientSpelling);
    return (await this.desktop.dispatch(tool, toolArguments(args), call.selector(), actorOf(caller), requester)).body;
  }
}
