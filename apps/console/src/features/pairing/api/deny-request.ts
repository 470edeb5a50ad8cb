import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { DenyAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { pairingKey } from './get-pairing';

export const denyRequest = (input: { request_id: string }) => apiPost<DenyAnswer>('/pairing/deny', input);

export const useDenyRequest = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: denyRequest, onSettled: () => qc.invalidateQueries({ queryKey: pairingKey }) });
};
