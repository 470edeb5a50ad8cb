import type { BridgeActivity, BridgeDevice, SafetyRecord } from '@svc/domain';
import { epoch } from '@svc/domain';

type PendingConfirmation = { requestId: string; tokenPrefix: string; path: string; verb: string; deadline: number };

/**
 * The wire views of the bridge read model, shared by the loopback `/bridge/*` routes and the console's
 * bridge page so both describe a phone, a command and a safety decision the same way.
 */
export function bridgeDeviceView(d: BridgeDevice, active: string | null, online: boolean) {
  return {
    token_prefix: d.tokenPrefix,
    device_id: d.deviceId,
    device_name: d.deviceName,
    active: active === d.tokenPrefix,
    online,
    screen_on: d.screenOn,
    battery: d.battery,
    current_app: d.currentApp,
    accessibility_enabled: d.accessibilityEnabled,
    master_enabled: d.masterEnabled,
    device_control_supported: d.deviceControlSupported,
    trusted_destructive_verbs: d.trustedVerbs,
    auto_disable_minutes: d.autoDisableMinutes,
    auto_disable_at: epoch(d.autoDisableAt),
    reported_at: epoch(d.reportedAt),
    last_command_at: epoch(d.lastCommandAt),
  };
}

/** One Device Control command: route, outcome, latency and the body's shape, never its content. */
export function bridgeActivityView(a: BridgeActivity) {
  return {
    request_id: a.requestId,
    token_prefix: a.tokenPrefix,
    method: a.method,
    path: a.path,
    shape: a.shape,
    at: epoch(a.at),
    outcome: a.outcome,
    status: a.status,
    latency_ms: a.latencyMs,
    safety: a.safety,
  };
}

export function safetyDecisionView(s: SafetyRecord) {
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
    ...(s.idleMinutes !== undefined ? { idle_minutes: s.idleMinutes } : {}),
    ...(s.by ? { confirmed_by: s.by } : {}),
  };
}

/** A destructive-verb confirmation the relay is waiting on. */
export function pendingConfirmationView(p: PendingConfirmation) {
  return { request_id: p.requestId, token_prefix: p.tokenPrefix, path: p.path, verb: p.verb, deadline: epoch(p.deadline) };
}
