import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';

export type MediaRow = {
  token_prefix: string;
  name: string;
  path: string;
  content_type: string;
  size: number;
  sensitive: boolean;
  owned: boolean;
  source: string;
  registered_at: number | null;
  expires_at: number | null;
  fetch_count: number;
  last_fetched_at: number | null;
};

export type MediaView = { server_time: number; count: number; bytes: number; entries: MediaRow[] };

export const mediaKey = ['media'] as const;

export const getMedia = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<MediaView>('/media', signal);

export const mediaQueryOptions = () => queryOptions({ queryKey: mediaKey, queryFn: getMedia, refetchInterval: 30_000 });

export const useMedia = () => useQuery(mediaQueryOptions());
