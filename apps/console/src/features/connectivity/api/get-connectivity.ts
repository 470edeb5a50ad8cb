import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ConnectivityView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const connectivityKey = ['connectivity'] as const;

export const getConnectivity = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<ConnectivityView>('/connectivity', signal);

// Reach's attempts between its logged changes are not events: the interval shows them.
export const connectivityQueryOptions = () => queryOptions({ queryKey: connectivityKey, queryFn: getConnectivity, refetchInterval: 15_000 });

export const useConnectivity = () => useQuery(connectivityQueryOptions());
