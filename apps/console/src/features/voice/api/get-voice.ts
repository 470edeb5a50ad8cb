import { queryOptions, useQuery } from '@tanstack/react-query';
import type { VoiceView } from '@svc/console-api';
import { apiGet } from '@/lib/api-client';

export const voiceKey = ['voice'] as const;

export const getVoice = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<VoiceView>('/voice', signal);

/**
 * Events refetch it; a socket opening on a session is not an event, so while sessions are open the page
 * asks again every few seconds to show which ones are streaming.
 */
export const voiceQueryOptions = () =>
  queryOptions({
    queryKey: voiceKey,
    queryFn: getVoice,
    refetchInterval: (q) => ((q.state.data?.open_sessions.length ?? 0) > 0 ? 3_000 : 30_000),
  });

export const useVoice = () => useQuery(voiceQueryOptions());
