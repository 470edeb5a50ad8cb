import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Overview } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const overviewKey = ['overview'] as const;

export const getOverview = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<Overview>('/overview', signal);

export const overviewQueryOptions = () => queryOptions({ queryKey: overviewKey, queryFn: getOverview, refetchInterval: 10_000, staleTime: 1_000 });

export const useOverview = () => useQuery(overviewQueryOptions());
