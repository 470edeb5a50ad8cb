import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPost } from '@/lib/api-client';
import { sessionsKey } from './get-sessions';

/** Reduction only (the relay refuses anything longer): seconds from now, or false to drop a grant. */
export type ShortenInput = { prefix: string; ttl_seconds?: number; grants?: Record<string, number | false> };

export const shortenSession = ({ prefix, ...body }: ShortenInput) =>
  apiPost<{ ok: true; token_prefix: string; expires_at: number | null; grants: Record<string, number | null> }>(
    `/sessions/${encodeURIComponent(prefix)}/shorten`,
    body,
  );

export const useShortenSession = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: shortenSession, onSettled: () => qc.invalidateQueries({ queryKey: sessionsKey }) });
};
