import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { UnblockAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { blocksKey } from './get-blocks';

/** Lifts one rate-limit block (`ratelimit.cleared` by the operator). */
export const unblock = (address: string) => apiPost<UnblockAnswer>('/pairing/unblock', { address });

export const useUnblock = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: unblock, onSettled: () => qc.invalidateQueries({ queryKey: blocksKey }) });
};
