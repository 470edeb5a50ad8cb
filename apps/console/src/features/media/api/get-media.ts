import { queryOptions, useQuery } from '@tanstack/react-query';
import type { MediaView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const mediaKey = ['media'] as const;

export const getMedia = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<MediaView>('/media', signal);

export const mediaQueryOptions = () => queryOptions({ queryKey: mediaKey, queryFn: getMedia, refetchInterval: 30_000 });

export const useMedia = () => useQuery(mediaQueryOptions());
