import { infiniteQueryOptions, useInfiniteQuery } from '@tanstack/react-query';
import type { EventsPage } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';
import { filterQuery, type EventFilters } from '@/lib/event-filter';

export const eventsKey = ['events'] as const;

const PAGE = 100;

export const getEvents = (query: string, signal?: AbortSignal) => apiGet<EventsPage>(`/events?${query}`, signal);

/** The tail: newest first, paging back with `before`. */
export const tailQueryOptions = (filters: EventFilters) => {
  const fq = filterQuery(filters);
  return infiniteQueryOptions({
    queryKey: [...eventsKey, 'tail', fq],
    queryFn: ({ pageParam, signal }) => getEvents(`limit=${PAGE}${pageParam ? `&before=${pageParam}` : ''}${fq ? `&${fq}` : ''}`, signal),
    initialPageParam: 0,
    getNextPageParam: (last) => (last.next && 'before' in last.next ? last.next.before : undefined),
    staleTime: Infinity,
  });
};

/** A replay: oldest first from a seq, paging forward with `after`. */
export const replayQueryOptions = (from: number, filters: EventFilters) => {
  const fq = filterQuery(filters);
  return infiniteQueryOptions({
    queryKey: [...eventsKey, 'replay', from, fq],
    queryFn: ({ pageParam, signal }) => getEvents(`limit=${PAGE}&after=${pageParam}${fq ? `&${fq}` : ''}`, signal),
    initialPageParam: from,
    getNextPageParam: (last) => (last.next && 'after' in last.next ? last.next.after : undefined),
    staleTime: Infinity,
  });
};

export const useTailEvents = (filters: EventFilters, enabled: boolean) => useInfiniteQuery({ ...tailQueryOptions(filters), enabled });

export const useReplayEvents = (from: number | null, filters: EventFilters) =>
  useInfiniteQuery({ ...replayQueryOptions(from ?? 0, filters), enabled: from !== null });
