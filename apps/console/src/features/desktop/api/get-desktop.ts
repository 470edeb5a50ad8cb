import { queryOptions, useQuery } from '@tanstack/react-query';
import type { DesktopView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const desktopKey = ['desktop'] as const;

export const getDesktop = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<DesktopView>('/desktop', signal);

// Events refetch it; the interval refreshes what is not an event (heartbeats, calls in flight).
export const desktopQueryOptions = () => queryOptions({ queryKey: desktopKey, queryFn: getDesktop, refetchInterval: 30_000 });

export const useDesktop = () => useQuery(desktopQueryOptions());
