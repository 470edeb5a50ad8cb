import { queryOptions, useQuery } from '@tanstack/react-query';
import type { RateLimitBlocksView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const blocksKey = ['pairing-blocks'] as const;

export const getBlocks = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<RateLimitBlocksView>('/pairing/blocks', signal);

/** Refetched on every rate-limit event; the minute poll only drops blocks that ran out meanwhile. */
export const blocksQueryOptions = () => queryOptions({ queryKey: blocksKey, queryFn: getBlocks, refetchInterval: 60_000 });

export const useBlocks = () => useQuery(blocksQueryOptions());
