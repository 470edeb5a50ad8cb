import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPost } from '@/lib/api-client';
import type { ChainStatus } from '@/lib/types';
import { overviewKey } from './get-overview';

export const verifyChain = () => apiPost<{ chain: ChainStatus }>('/chain/verify');

export const useVerifyChain = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: verifyChain, onSuccess: () => qc.invalidateQueries({ queryKey: overviewKey }) });
};
