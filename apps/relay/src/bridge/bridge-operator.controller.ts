import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { Auth } from '../common/auth';
import { Clock } from '../common/clock';
import { EventLog } from '../common/event-log';
import { BridgeService } from './bridge.service';
import { bridgeActivityView, bridgeDeviceView, pendingConfirmationView, safetyDecisionView } from './bridge-views';
import { SelectActiveDto } from './device-control.dto';

const epoch = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

class ActivityQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;
}

/** Loopback operator routes (spec 4.10): what the bridge is doing and which phone it drives. */
@Controller('/bridge')
export class BridgeOperatorController {
  constructor(
    private readonly bridge: BridgeService,
    private readonly log: EventLog,
    private readonly clock: Clock,
  ) {}

  @Get('/status')
  @Auth('loopback')
  status() {
    const m = this.log.models.bridge;
    const devices = m.allDevices();
    const active = devices.find((d) => d.tokenPrefix === m.active) ?? (devices.length === 1 ? devices[0] : null);
    const counts = m.decisionCounts();
    return {
      ok: true,
      device: active ? bridgeDeviceView(active, m.active, this.bridge.isOnline(active)) : null,
      bridge: {
        connected: devices.length > 0,
        devices: devices.length,
        active: m.active,
        in_flight: this.bridge.inFlight,
        commands_total: m.totalCommands,
        last_command_at: epoch(
          devices.reduce<number | null>((t, d) => (d.lastCommandAt !== null && (t === null || d.lastCommandAt > t) ? d.lastCommandAt : t), null),
        ),
      },
      safety: {
        master_enabled: active?.masterEnabled ?? null,
        device_control_supported: active?.deviceControlSupported ?? null,
        auto_disable_minutes: active?.autoDisableMinutes ?? null,
        auto_disable_at: epoch(active?.autoDisableAt ?? null),
        trusted_destructive_verbs: active?.trustedVerbs ?? [],
        blocklist: this.bridge.settings.blocklist,
        destructive_verbs: this.bridge.settings.destructiveVerbs,
        route_verbs: this.bridge.settings.routeVerbs,
        pending_confirmations: m.pendingConfirmations().map(pendingConfirmationView),
        decisions: counts,
        recent: m.safety(10).map(safetyDecisionView),
      },
    };
  }

  @Get('/activity')
  @Auth('loopback')
  activity(@Query() q: ActivityQuery) {
    const m = this.log.models.bridge;
    return { ok: true, activity: m.activity(q.limit ?? 50).map(bridgeActivityView), safety: m.safety(q.limit ?? 50).map(safetyDecisionView) };
  }

  @Get('/devices')
  @Auth('loopback')
  devices() {
    const m = this.log.models.bridge;
    return {
      ok: true,
      active: m.active,
      devices: m.allDevices().map((d) => bridgeDeviceView(d, this.log.models.bridge.active, this.bridge.isOnline(d))),
    };
  }

  @Post('/select-active')
  @Auth('loopback')
  @HttpCode(200)
  async selectActive(@Body() body: SelectActiveDto) {
    const d = await this.bridge.selectActive((body.device_id ?? body.device)!);
    return { ok: true, active: d.tokenPrefix, device: bridgeDeviceView(d, this.log.models.bridge.active, this.bridge.isOnline(d)) };
  }
}
