import { queryOptions, useQuery } from '@tanstack/react-query';
import type { PersonalDataView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

/** Also the root of the forget dry runs' keys, so an event that refetches the view refetches an open dry run. */
export const personalDataKey = ['personal-data'] as const;

export const getPersonalData = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<PersonalDataView>('/personal-data', signal);

export const personalDataQueryOptions = () => queryOptions({ queryKey: personalDataKey, queryFn: getPersonalData, refetchInterval: 60_000 });

export const usePersonalData = () => useQuery(personalDataQueryOptions());
