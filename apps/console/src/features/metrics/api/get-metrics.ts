import { queryOptions, useQuery } from '@tanstack/react-query';
import type { MetricsView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const metricsKey = ['metrics'] as const;

export const getMetrics = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<MetricsView>('/metrics', signal);

/** The relay samples every 2 s; the page asks as often, so each new point shows within one interval. */
export const metricsQueryOptions = () => queryOptions({ queryKey: metricsKey, queryFn: getMetrics, refetchInterval: 2_000, staleTime: 1_000 });

export const useMetrics = () => useQuery(metricsQueryOptions());
