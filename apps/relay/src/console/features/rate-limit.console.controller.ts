import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { RateLimitBlocksView, UnblockAnswer } from '@svc/console-api';
import { epoch, unblockAddress } from '@svc/domain';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { ConsoleUnblockDto } from './console.dto';

/**
 * The rate limiter's blocks in force, on the Pairing page (bad pairing codes block an address there), and
 * the operator's Unblock: `ratelimit.cleared` for that address, written by the operator.
 */
@Controller('/console/api/pairing')
export class RateLimitConsoleController {
  constructor(
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
  ) {}

  @Get('/blocks')
  @Auth('operator')
  blocks(): RateLimitBlocksView {
    const now = this.clock.now();
    const blocks = this.loop.models.rateLimit
      .activeBlocks(now)
      .toSorted((a, b) => b.since - a.since)
      .map((b) => ({ address: b.ip, kind: b.kind, since: epoch(b.since), until: epoch(b.until) }));
    return { ok: true, server_time: epoch(now), blocks };
  }

  @Post('/unblock')
  @Auth('operator')
  @HttpCode(200)
  async unblock(@Body() body: ConsoleUnblockDto): Promise<UnblockAnswer> {
    const [e] = await this.loop.run('operator', (m, now) => unblockAddress(m.rateLimit, body.address, now));
    return { ok: true, unblocked: e.data.ip ?? body.address };
  }
}
