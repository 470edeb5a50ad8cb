import { queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import type { CheckpointKeyView, CheckpointMade } from '@svc/console-api';
import { apiGet, apiPost } from '@/lib/api-client';

export const checkpointKeyKey = ['store', 'checkpoint-key'] as const;

export const getCheckpointKey = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<CheckpointKeyView>('/store/checkpoint', signal);

/** The key never changes while the relay runs: fetched once. */
export const checkpointKeyQueryOptions = () => queryOptions({ queryKey: checkpointKeyKey, queryFn: getCheckpointKey, staleTime: Infinity });

export const useCheckpointKey = () => useQuery(checkpointKeyQueryOptions());

/** Signs the relay's durable head now (the relay records the act as an event). */
export const makeCheckpoint = () => apiPost<CheckpointMade>('/store/checkpoint');

export const useMakeCheckpoint = (onMade: (made: CheckpointMade) => void) => useMutation({ mutationFn: makeCheckpoint, onSuccess: onMade });
