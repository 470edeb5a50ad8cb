import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

export type ThreadsView = {
  server_time: number;
  subscriber: { token_prefix: string; device_name: string; since: number | null } | null;
  queued: Array<{ message_id: string; chat_id: string; title: string | null; text: string; posted_at: number | null; expires_at: number | null }>;
  threads: Array<{ chat_id: string; title: string | null; messages: number; replies: number; last_activity: number | null }>;
  notifications: Array<{
    entry_id: string;
    token_prefix: string;
    device_name: string;
    package_name: string;
    title: string | null;
    text: string | null;
    received_at: number | null;
  }>;
};

export const threadsKey = ['threads'] as const;

export const getThreads = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<ThreadsView>('/threads', signal);

export const threadsQueryOptions = () => queryOptions({ queryKey: threadsKey, queryFn: getThreads, refetchInterval: 30_000 });

export const useThreads = () => useQuery(threadsQueryOptions());
