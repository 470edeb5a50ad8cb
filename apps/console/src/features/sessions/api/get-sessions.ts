import { queryOptions, useQuery } from '@tanstack/react-query';
import type { SessionsView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const sessionsKey = ['sessions'] as const;

export const getSessions = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<SessionsView>('/sessions', signal);

export const sessionsQueryOptions = () => queryOptions({ queryKey: sessionsKey, queryFn: getSessions, refetchInterval: 30_000 });

export const useSessions = () => useQuery(sessionsQueryOptions());
