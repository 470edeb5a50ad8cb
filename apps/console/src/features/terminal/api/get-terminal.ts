import { queryOptions, useQuery } from '@tanstack/react-query';
import type { TerminalView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const terminalKey = ['terminal'] as const;

export const getTerminal = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<TerminalView>('/terminal', signal);

export const terminalQueryOptions = () => queryOptions({ queryKey: terminalKey, queryFn: getTerminal, refetchInterval: 30_000 });

export const useTerminal = () => useQuery(terminalQueryOptions());
