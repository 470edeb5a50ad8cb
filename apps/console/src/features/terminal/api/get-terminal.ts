import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

export type TerminalView = {
  server_time: number;
  shells: Array<{
    shell_id: string;
    session_name: string;
    token_prefix: string;
    device_id: string;
    pid: number;
    shell: string;
    cols: number;
    rows: number;
    attached: boolean;
    opened_at: number | null;
    detached_at: number | null;
    grace_expires_at: number | null;
    paused: boolean;
  }>;
  tuis: Array<{ tui_id: string; token_prefix: string; pid: number; program: string; started_at: number | null }>;
};

export const terminalKey = ['terminal'] as const;

export const getTerminal = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<TerminalView>('/terminal', signal);

export const terminalQueryOptions = () => queryOptions({ queryKey: terminalKey, queryFn: getTerminal, refetchInterval: 30_000 });

export const useTerminal = () => useQuery(terminalQueryOptions());
