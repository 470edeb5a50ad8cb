import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ForgetSecretAnswer, SecretsView, SetSecretAnswer } from '@svc/console-api';
import { apiGet, apiPost } from '@/lib/api-client';

export const secretsKey = ['secrets'] as const;

export const getSecrets = ({ signal }: { signal?: AbortSignal } = {}) => apiGet<SecretsView>('/secrets', signal);

export const secretsQueryOptions = () => queryOptions({ queryKey: secretsKey, queryFn: getSecrets });

export const useSecrets = () => useQuery(secretsQueryOptions());

/** The value goes in the request body only; the form clears its field once the request settles (SecretsCard). */
export const useSetSecret = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (s: { name: string; value: string }) => apiPost<SetSecretAnswer>('/secrets', s),
    onSettled: () => qc.invalidateQueries({ queryKey: secretsKey }),
  });
};

export const useForgetSecret = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => apiPost<ForgetSecretAnswer>('/secrets/forget', { name }),
    onSettled: () => qc.invalidateQueries({ queryKey: secretsKey }),
  });
};
