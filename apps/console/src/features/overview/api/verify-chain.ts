import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ChainVerifyAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { overviewKey } from './get-overview';

export const verifyChain = () => apiPost<ChainVerifyAnswer>('/chain/verify');

export const useVerifyChain = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: verifyChain, onSuccess: () => qc.invalidateQueries({ queryKey: overviewKey }) });
};
