import type { BridgeActivity, BridgeDevice, PendingConfirmation, ReadModels, SafetyRecord, SafetySettings } from '@svc/domain';
import { epoch, secondsBetween } from '@svc/domain';

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
    // A copy: the wire row's list is mutable, the read model's is not.
    trusted_destructive_verbs: [...d.trustedVerbs],
    auto_disable_minutes: d.autoDisableMinutes,
    auto_disable_at: epoch(d.autoDisableAt),
    auto_disable_by: d.autoDisableBy,
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
    ...(a.via ? { via: a.via, client: a.client } : {}),
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
    ...(s.via ? { via: s.via, client: s.client } : {}),
  };
}

/** A destructive-verb confirmation the relay is waiting on. */
export function pendingConfirmationView(p: PendingConfirmation) {
  return { request_id: p.requestId, token_prefix: p.tokenPrefix, path: p.path, verb: p.verb, deadline: epoch(p.deadline) };
}

/**
 * `GET /bridge/status`. Every agent tool's availability check reads top-level `phone_connected` (and
 * `bridge.device_control_supported`): 200 while a phone is known, 503 `{phone_connected: false}` when
 * none has reported on the bridge, as the reference relay answers.
 */
export function bridgeStatusView(
  models: ReadModels,
  isOnline: (d: BridgeDevice) => boolean,
  settings: SafetySettings,
  inFlight: number,
  now: Date,
): { status: 200 | 503; body: Record<string, unknown> } {
  const m = models.bridge;
  const devices = m.allDevices();
  const online = devices.filter((d) => isOnline(d));
  const active =
    devices.find((d) => d.tokenPrefix === m.active) ?? (online.length === 1 ? online[0] : null) ?? (devices.length === 1 ? devices[0] : null);
  const counts = m.decisionCounts();
  const phoneConnected = active ? isOnline(active) : false;
  const seen = active ? (models.sessions.byTokenPrefix(active.tokenPrefix)?.lastSeen ?? active.reportedAt) : null;
  const body = {
    ok: devices.length > 0,
    ...(devices.length === 0 ? { error: 'no phone connected', code: 'bridge.no_device' } : {}),
    phone_connected: phoneConnected,
    connected: phoneConnected,
    last_seen_seconds_ago: seen === null ? null : secondsBetween(seen, now),
    device_id: active?.deviceId ?? null,
    device_name: active?.deviceName ?? null,
    device: active ? bridgeDeviceView(active, m.active, isOnline(active)) : null,
    bridge: {
      device_control_supported: active?.deviceControlSupported ?? null,
      master_enabled: active?.masterEnabled ?? null,
      connected: online.length > 0,
      online: online.length,
      devices: devices.length,
      active: m.active,
      in_flight: inFlight,
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
      auto_disable_by: active?.autoDisableBy ?? null,
      trusted_destructive_verbs: active?.trustedVerbs ?? [],
      blocklist: settings.blocklist,
      destructive_verbs: settings.destructiveVerbs,
      route_verbs: settings.routeVerbs,
      pending_confirmations: m.pendingConfirmations().map(pendingConfirmationView),
      decisions: counts,
      recent: m.safety(10).map(safetyDecisionView),
    },
  };
  return { status: devices.length === 0 ? 503 : 200, body };
}
