import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ProfilesView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

/** The root of every profiles query (the catalog, and each profile's SOUL and memory under it). */
export const profilesKey = ['profiles'] as const;

export const getProfiles = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<ProfilesView>('/profiles', signal);

export const profilesQueryOptions = () => queryOptions({ queryKey: profilesKey, queryFn: getProfiles, refetchInterval: 30_000 });

export const useProfiles = () => useQuery(profilesQueryOptions());
