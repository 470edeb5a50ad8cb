import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';
import type { ChainStatus, ConsoleEvent } from '@/lib/types';

export type Overview = {
  server_time: number;
  version: string;
  started_at: number;
  uptime_seconds: number;
  listen: { host: string; port: number; url: string };
  tls: boolean;
  phones_online: number;
  sockets_online: number;
  sessions: number;
  pending_pairings: number;
  ready_codes: number;
  events_per_second: number;
  log: { last_seq: number; bytes: number; segments: number; store: 'file' | 'postgres' };
  chain: ChainStatus;
  console_streams: number;
  bridge?: { devices: number; commands_total: number; stopped_by_safety: number };
  media?: { entries: number; bytes: number };
  threads?: { queued: number; subscribed: boolean };
  features: Array<{ id: string; title: string; order: number }>;
  recent_events: ConsoleEvent[];
};

export const overviewKey = ['overview'] as const;

export const getOverview = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<Overview>('/overview', signal);

export const overviewQueryOptions = () => queryOptions({ queryKey: overviewKey, queryFn: getOverview, refetchInterval: 10_000, staleTime: 1_000 });

export const useOverview = () => useQuery(overviewQueryOptions());
