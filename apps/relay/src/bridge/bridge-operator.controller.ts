import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { epoch } from '@svc/domain';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from '../common/validators';
import { Auth } from '../common/auth';
import { Clock } from '../common/clock';
import { CommandLoop } from '../common/command-loop';
import { BridgeService } from './bridge.service';
import { bridgeActivityView, bridgeDeviceView, pendingConfirmationView, safetyDecisionView } from './bridge-views';
import { SelectActiveDto } from './device-control.dto';

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
    private readonly log: CommandLoop,
    private readonly clock: Clock,
  ) {}

  /**
   * Every agent tool's availability check reads top-level `phone_connected` (and
   * `bridge.device_control_supported`): 200 while a phone is known, 503 `{phone_connected: false}` when
   * none has reported on the bridge, as the reference relay answers.
   */
  @Get('/status')
  @Auth('loopback')
  status(@Res({ passthrough: true }) res: FastifyReply) {
    const m = this.log.models.bridge;
    const devices = m.allDevices();
    const online = devices.filter((d) => this.bridge.isOnline(d));
    const active =
      devices.find((d) => d.tokenPrefix === m.active) ?? (online.length === 1 ? online[0] : null) ?? (devices.length === 1 ? devices[0] : null);
    const counts = m.decisionCounts();
    const phoneConnected = active ? this.bridge.isOnline(active) : false;
    const seen = active ? (this.log.models.sessions.byTokenPrefix(active.tokenPrefix)?.lastSeen ?? active.reportedAt) : null;
    if (devices.length === 0) res.status(503);
    return {
      ok: devices.length > 0,
      ...(devices.length === 0 ? { error: 'no phone connected', code: 'bridge.no_device' } : {}),
      phone_connected: phoneConnected,
      connected: phoneConnected,
      last_seen_seconds_ago: seen === null ? null : Math.max(0, Math.floor((this.clock.now().getTime() - seen) / 1000)),
      device_id: active?.deviceId ?? null,
      device_name: active?.deviceName ?? null,
      device: active ? bridgeDeviceView(active, m.active, this.bridge.isOnline(active)) : null,
      bridge: {
        device_control_supported: active?.deviceControlSupported ?? null,
        master_enabled: active?.masterEnabled ?? null,
        connected: online.length > 0,
        online: online.length,
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
