import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ShortenAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { sessionsKey } from './get-sessions';

/** Reduction only (the relay refuses anything longer): seconds from now, or false to drop a grant. */
export type ShortenInput = { prefix: string; ttl_seconds?: number; grants?: Record<string, number | false> };

export const shortenSession = ({ prefix, ...body }: ShortenInput) => apiPost<ShortenAnswer>(`/sessions/${encodeURIComponent(prefix)}/shorten`, body);

export const useShortenSession = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: shortenSession, onSettled: () => qc.invalidateQueries({ queryKey: sessionsKey }) });
};
