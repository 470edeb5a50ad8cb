import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ApproveAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { pairingKey } from './get-pairing';

export const approveRequest = (input: { request_id: string; ttl_seconds?: number }) => apiPost<ApproveAnswer>('/pairing/approve', input);

export const useApproveRequest = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: approveRequest, onSettled: () => qc.invalidateQueries({ queryKey: pairingKey }) });
};
