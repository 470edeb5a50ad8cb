import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

export type PairingCodeRow = {
  /** The first 8 characters of the code's digest: a reference, never the code. */
  code_ref: string;
  request_id: string | null;
  state: 'ready' | 'pending';
  source: 'register' | 'mint' | 'env' | 'public';
  created_at: number;
  expires_at: number;
  ip: string | null;
  device_name: string | null;
  session_ttl_seconds: number | null;
  grants: string[] | null;
};

export type PairingView = { server_time: number; tls: boolean; pending: PairingCodeRow[]; ready: PairingCodeRow[] };

export const pairingKey = ['pairing'] as const;

export const getPairing = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<PairingView>('/pairing', signal);

export const pairingQueryOptions = () => queryOptions({ queryKey: pairingKey, queryFn: getPairing, refetchInterval: 30_000 });

export const usePairing = () => useQuery(pairingQueryOptions());
