import { queryOptions, useQuery } from '@tanstack/react-query';
import type { RecordingsView } from '@svc/console-api';
import { API_BASE, apiGet } from '@/lib/api-client';

export const recordingsKey = ['terminal', 'recordings'] as const;

export const getRecordings = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<RecordingsView>('/terminal/recordings', signal);

export const recordingsQueryOptions = () => queryOptions({ queryKey: recordingsKey, queryFn: getRecordings, refetchInterval: 60_000 });

export const useRecordings = () => useQuery(recordingsQueryOptions());

/** The asciicast file of a listed recording (the id is the relay's, never typed by hand). */
export const recordingUrl = (recordingId: string) => `${API_BASE}/terminal/recordings/${encodeURIComponent(recordingId)}`;
