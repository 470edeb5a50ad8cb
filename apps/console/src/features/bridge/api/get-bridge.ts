import { queryOptions, useQuery } from '@tanstack/react-query';
import type { BridgeView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const bridgeKey = ['bridge'] as const;

export const getBridge = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<BridgeView>('/bridge', signal);

export const bridgeQueryOptions = () => queryOptions({ queryKey: bridgeKey, queryFn: getBridge, refetchInterval: 30_000 });

export const useBridge = () => useQuery(bridgeQueryOptions());
