import { queryOptions, useQuery } from '@tanstack/react-query';
import type { TrailsView, TrailView } from '@svc/console-api';
import { API_BASE, apiGet } from '@/lib/api-client';
import { bridgeKey } from './get-bridge';

/** Under the Bridge page's key: a `bridge.*` event refreshes the playback with the rest of the page. */
export const trailsKey = [...bridgeKey, 'trails'] as const;

export const getTrails = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<TrailsView>('/bridge/trails', signal);
export const getTrail = (session: string, signal?: AbortSignal) => apiGet<TrailView>(`/bridge/trails/${encodeURIComponent(session)}`, signal);

export const trailsQueryOptions = () => queryOptions({ queryKey: trailsKey, queryFn: getTrails, refetchInterval: 30_000 });
export const trailQueryOptions = (session: string) =>
  queryOptions({ queryKey: [...trailsKey, session], queryFn: ({ signal }) => getTrail(session, signal) });

export const useTrails = () => useQuery(trailsQueryOptions());
export const useTrail = (session: string | null) => useQuery({ ...trailQueryOptions(session ?? ''), enabled: session !== null });

/** A screenshot's thumbnail (a small JPEG) by its media entry's token prefix, never the token. */
export const thumbnailUrl = (media: string): string => `${API_BASE}/bridge/trails/thumbnail/${encodeURIComponent(media)}`;
