import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { VerifyStartAnswer, VerifyStatusAnswer } from '@svc/console-api';
import { apiGet, apiPost } from '@/lib/api-client';

export const verifyKey = ['store', 'verify'] as const;

export const getVerifyStatus = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<VerifyStatusAnswer>('/store/verify', signal);

/** Polled a few times a second while a check runs (its progress), not at all otherwise. */
export const verifyQueryOptions = () =>
  queryOptions({
    queryKey: verifyKey,
    queryFn: getVerifyStatus,
    refetchInterval: (q) => (q.state.data?.job?.state === 'running' ? 250 : false),
  });

export const useVerifyStatus = () => useQuery(verifyQueryOptions());

/** Starts the full check (or joins the one running); the status query takes over from its answer. */
export const startVerify = () => apiPost<VerifyStartAnswer>('/store/verify');

export const useStartVerify = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: startVerify,
    onSuccess: (a) => {
      qc.setQueryData<VerifyStatusAnswer>(verifyKey, (old) => ({ ok: true, server_time: old?.server_time ?? 0, job: a.job }));
      void qc.invalidateQueries({ queryKey: verifyKey });
    },
  });
};
