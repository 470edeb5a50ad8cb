import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { BridgeActivity, BridgeDevice, SafetyRecord } from '@svc/domain';
import { IsString, Length } from 'class-validator';
import { BridgeService } from '../../bridge/bridge.service';
import { Auth } from '../../common/auth';
import { Clock } from '../../common/clock';
import { EventLog } from '../../common/event-log';
import { ConsoleFeatures } from '../console-features';
import { serviceRef } from './service-ref';

const epoch = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

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
  private readonly bridge: () => BridgeService;

  constructor(
    ref: ModuleRef,
    features: ConsoleFeatures,
    private readonly log: EventLog,
    private readonly clock: Clock,
  ) {
    this.bridge = serviceRef(ref, BridgeService);
    features.add({ id: 'bridge', title: 'Bridge', order: 30 });
  }

  @Get()
  @Auth('loopback')
  view() {
    const m = this.log.models.bridge;
    const bridge = this.bridge();
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      active: m.active,
      devices: m.allDevices().map((d) => deviceView(d, m.active, bridge.isOnline(d))),
      in_flight: bridge.inFlight,
      commands_total: m.totalCommands,
      decisions: m.decisionCounts(),
      pending_confirmations: m
        .pendingConfirmations()
        .map((p) => ({ request_id: p.requestId, token_prefix: p.tokenPrefix, path: p.path, verb: p.verb, deadline: epoch(p.deadline) })),
      activity: m.activity(100).map(activityView),
      safety: m.safety(100).map(safetyView),
    };
  }

  @Post('/select-active')
  @Auth('loopback')
  @HttpCode(200)
  async selectActive(@Body() body: ConsoleSelectActiveDto) {
    const d = await this.bridge().selectActive(body.device);
    return { ok: true, active: d.tokenPrefix };
  }
}

function deviceView(d: BridgeDevice, active: string | null, online: boolean) {
  return {
    token_prefix: d.tokenPrefix,
    device_id: d.deviceId,
    device_name: d.deviceName,
    active: active === d.tokenPrefix,
    online,
    screen_on: d.screenOn,
    battery: d.battery,
    current_app: d.currentApp,
    master_enabled: d.masterEnabled,
    device_control_supported: d.deviceControlSupported,
    auto_disable_at: epoch(d.autoDisableAt),
    reported_at: epoch(d.reportedAt),
    last_command_at: epoch(d.lastCommandAt),
  };
}

function activityView(a: BridgeActivity) {
  return {
    request_id: a.requestId,
    token_prefix: a.tokenPrefix,
    method: a.method,
    path: a.path,
    at: epoch(a.at),
    outcome: a.outcome,
    status: a.status,
    latency_ms: a.latencyMs,
    safety: a.safety,
  };
}

function safetyView(s: SafetyRecord) {
  return {
    seq: s.seq,
    at: epoch(s.at),
    decision: s.decision,
    token_prefix: s.tokenPrefix,
    request_id: s.requestId,
    path: s.path,
    reason: s.reason,
    package: s.package ?? null,
    verb: s.verb ?? null,
  };
}
