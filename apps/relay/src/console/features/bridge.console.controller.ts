import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { BridgeView, SelectActiveAnswer } from '@svc/console-api';
import { IsString, Length } from '../../common/http/validators';
import { BridgeService } from '../../bridge/bridge.service';
import { bridgeActivityView, bridgeDeviceView, pendingConfirmationView, safetyDecisionView } from '../../bridge/bridge-views';
import { Auth } from '../../common/auth/auth';
import { Clock } from '../../common/loop/clock';
import { CommandLoop } from '../../common/loop/command-loop';
import { ConsoleFeatures } from '../console-features';
import { epoch } from '@svc/domain';

class ConsoleSelectActiveDto {
  @IsString()
  @Length(1, 128)
  device!: string;
}

/**
 * Bridge page: phones on the bridge channel and the active one, recent Device Control commands
 * (route, outcome, latency; the command's shape only, never its text), and the safety pipeline's
 * decisions with their reasons. Select-active goes through BridgeService like `/bridge/select-active`.
 */
@Controller('/console/api/bridge')
export class BridgeConsoleController {
  constructor(
    private readonly bridge: BridgeService,
    features: ConsoleFeatures,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
  ) {
    features.add({ id: 'bridge', title: 'Bridge', order: 30 });
  }

  @Get()
  @Auth('operator')
  view(): BridgeView {
    const m = this.loop.models.bridge;
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      active: m.active,
      devices: m.allDevices().map((d) => bridgeDeviceView(d, m.active, this.bridge.isOnline(d))),
      in_flight: this.bridge.inFlight,
      commands_total: m.totalCommands,
      decisions: m.decisionCounts(),
      pending_confirmations: m.pendingConfirmations().map(pendingConfirmationView),
      activity: m.activity(100).map(bridgeActivityView),
      safety: m.safety(100).map(safetyDecisionView),
    };
  }

  @Post('/select-active')
  @Auth('operator')
  @HttpCode(200)
  async selectActive(@Body() body: ConsoleSelectActiveDto): Promise<SelectActiveAnswer> {
    const d = await this.bridge.selectActive(body.device);
    return { ok: true, active: d.tokenPrefix };
  }
}
