import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Auth } from '../common/auth/auth';
import { Clock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { BridgeService } from './bridge.service';
import { ActivityQuery, SelectActiveDto } from './bridge-operator.dto';
import { bridgeActivityView, bridgeDeviceView, bridgeStatusView, safetyDecisionView } from './bridge-views';

/** Loopback operator routes (spec 4.10): what the bridge is doing and which phone it drives. */
@Controller('/bridge')
export class BridgeOperatorController {
  constructor(
    private readonly bridge: BridgeService,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
  ) {}

  /**
   * Every agent tool's availability check reads top-level `phone_connected` (and
   * `bridge.device_control_supported`): 200 while a phone is known, 503 `{phone_connected: false}` when
   * none has reported on the bridge, as the reference relay answers (bridgeStatusView).
   */
  @Get('/status')
  @Auth('platform')
  status(@Res({ passthrough: true }) res: FastifyReply) {
    const r = bridgeStatusView(this.loop.models, (d) => this.bridge.isOnline(d), this.bridge.settings, this.bridge.inFlight, this.clock.now());
    void res.status(r.status);
    return r.body;
  }

  @Get('/activity')
  @Auth('platform')
  activity(@Query() q: ActivityQuery) {
    const m = this.loop.models.bridge;
    return { ok: true, activity: m.activity(q.limit ?? 50).map(bridgeActivityView), safety: m.safety(q.limit ?? 50).map(safetyDecisionView) };
  }

  @Get('/devices')
  @Auth('operator')
  devices() {
    const m = this.loop.models.bridge;
    return {
      ok: true,
      active: m.active,
      devices: m.allDevices().map((d) => bridgeDeviceView(d, this.loop.models.bridge.active, this.bridge.isOnline(d))),
    };
  }

  @Post('/select-active')
  @Auth('operator')
  @HttpCode(200)
  async selectActive(@Body() body: SelectActiveDto) {
    const d = await this.bridge.selectActive((body.device_id ?? body.device)!);
    return { ok: true, active: d.tokenPrefix, device: bridgeDeviceView(d, this.loop.models.bridge.active, this.bridge.isOnline(d)) };
  }
}
