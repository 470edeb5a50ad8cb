import { queryOptions, useQuery } from '@tanstack/react-query';
import type { ProfileMemoryView, ProfileSoulView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';
import { profilesKey } from './get-profiles';

export const profileSoulKey = (name: string) => [...profilesKey, name, 'soul'] as const;
export const profileMemoryKey = (name: string) => [...profilesKey, name, 'memory'] as const;

const path = (name: string) => `/profiles/${encodeURIComponent(name)}`;

export const getProfileSoul = (name: string, signal?: AbortSignal) => apiGet<ProfileSoulView>(`${path(name)}/soul`, signal);
export const getProfileMemory = (name: string, signal?: AbortSignal) => apiGet<ProfileMemoryView>(`${path(name)}/memory`, signal);

export const profileSoulQueryOptions = (name: string) =>
  queryOptions({ queryKey: profileSoulKey(name), queryFn: ({ signal }) => getProfileSoul(name, signal) });
export const profileMemoryQueryOptions = (name: string) =>
  queryOptions({ queryKey: profileMemoryKey(name), queryFn: ({ signal }) => getProfileMemory(name, signal) });

export const useProfileSoul = (name: string) => useQuery(profileSoulQueryOptions(name));
export const useProfileMemory = (name: string) => useQuery(profileMemoryQueryOptions(name));

/** The avatar phones get, through the console's own loopback route. */
export const avatarUrl = (name: string) => `/console/api${path(name)}/avatar`;
