import { queryOptions, useQuery } from '@tanstack/react-query';
import type { StoreView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const storeKey = ['store'] as const;

export const getStore = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<StoreView>('/store', signal);

export const storeQueryOptions = () => queryOptions({ queryKey: storeKey, queryFn: getStore, refetchInterval: 15_000, staleTime: 1_000 });

export const useStore = () => useQuery(storeQueryOptions());
