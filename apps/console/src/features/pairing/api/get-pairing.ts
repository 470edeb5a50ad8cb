import { queryOptions, useQuery } from '@tanstack/react-query';
import type { PairingView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const pairingKey = ['pairing'] as const;

export const getPairing = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<PairingView>('/pairing', signal);

export const pairingQueryOptions = () => queryOptions({ queryKey: pairingKey, queryFn: getPairing, refetchInterval: 30_000 });

export const usePairing = () => useQuery(pairingQueryOptions());
