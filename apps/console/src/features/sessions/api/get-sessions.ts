import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

export type SessionRow = {
  token_prefix: string;
  device_name: string;
  device_id: string;
  device_model: string | null;
  device_platform: string | null;
  device_hostname: string | null;
  /** What the client says it is (`android`, `desktop`...; `unknown` when it did not say). */
  client_surface: string;
  device_form_factor: string;
  created_at: number;
  first_seen: number;
  last_seen: number;
  expires_at: number | null;
  /** channel → epoch seconds (null: as long as the session). */
  grants: Record<string, number | null>;
  transport_hint: string | null;
  transport: string;
  online: boolean;
  connections: Array<{ ip: string; path: string; since: number }>;
  /** The device's trusted-device renewal (never its refresh token); null: it has none. */
  trusted_device: { issued_at: number; expires_at: number; renewals: number; last_renewed_at: number | null; adopted: boolean } | null;
};

export const sessionsKey = ['sessions'] as const;

export const getSessions = ({ signal }: { signal?: AbortSignal } = {}) =>
  apiGet<{ sessions: SessionRow[]; server_time: number }>('/sessions', signal);

export const sessionsQueryOptions = () => queryOptions({ queryKey: sessionsKey, queryFn: getSessions, refetchInterval: 30_000 });

export const useSessions = () => useQuery(sessionsQueryOptions());
