import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ThreadsView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const threadsKey = ['threads'] as const;

export const getThreads = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<ThreadsView>('/threads', signal);

export const threadsQueryOptions = () => queryOptions({ queryKey: threadsKey, queryFn: getThreads, refetchInterval: 30_000 });

export const useThreads = () => useQuery(threadsQueryOptions());
