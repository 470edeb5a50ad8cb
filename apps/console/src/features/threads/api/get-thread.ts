import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ThreadDetail } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';
import { threadsKey } from './get-threads';

/** Under the list's key, so every Threads event that refetches the list refetches an open thread too. */
export const threadKey = (chatId: string) => [...threadsKey, chatId] as const;

export const getThread = (chatId: string, { signal }: { signal?: AbortSignal } = {}) =>
  apiGet<ThreadDetail>(`/threads/${encodeURIComponent(chatId)}`, signal);

export const threadQueryOptions = (chatId: string) =>
  queryOptions({ queryKey: threadKey(chatId), queryFn: ({ signal }) => getThread(chatId, { signal }) });

export const useThread = (chatId: string | null) => useQuery({ ...threadQueryOptions(chatId ?? ''), enabled: chatId !== null });
