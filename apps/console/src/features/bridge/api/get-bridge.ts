import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

export type BridgeDeviceRow = {
  token_prefix: string;
  device_id: string;
  device_name: string;
  active: boolean;
  online: boolean;
  screen_on: boolean | null;
  battery: number | null;
  current_app: string | null;
  master_enabled: boolean;
  device_control_supported: boolean;
  auto_disable_at: number | null;
  reported_at: number | null;
  last_command_at: number | null;
};

export type BridgeActivityRow = {
  request_id: string;
  token_prefix: string;
  method: string;
  path: string;
  at: number;
  outcome: string;
  status: number | null;
  latency_ms: number | null;
  safety: string | null;
};

export type SafetyRow = {
  seq: number;
  at: number;
  decision: string;
  token_prefix: string;
  request_id: string | null;
  path: string | null;
  reason: string;
  package: string | null;
  verb: string | null;
};

export type BridgeView = {
  server_time: number;
  active: string | null;
  devices: BridgeDeviceRow[];
  in_flight: number;
  commands_total: number;
  decisions: Record<string, number>;
  pending_confirmations: Array<{ request_id: string; token_prefix: string; path: string; verb: string; deadline: number | null }>;
  activity: BridgeActivityRow[];
  safety: SafetyRow[];
};

export const bridgeKey = ['bridge'] as const;

export const getBridge = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<BridgeView>('/bridge', signal);

export const bridgeQueryOptions = () => queryOptions({ queryKey: bridgeKey, queryFn: getBridge, refetchInterval: 30_000 });

export const useBridge = () => useQuery(bridgeQueryOptions());
