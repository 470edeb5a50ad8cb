import { useQuery } from '@tanstack/react-query';
import type { RelaysView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

/** Under the Store key: every event refreshes it too (a takeover is one); the interval moves "last seen". */
export const relaysKey = ['store', 'relays'] as const;

const getRelays = ({ signal }: { signal?: AbortSignal }) => apiGet<RelaysView>('/store/relays', signal);

export const useRelays = () => useQuery({ queryKey: relaysKey, queryFn: getRelays, refetchInterval: 2_000 });
