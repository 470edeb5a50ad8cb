import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { RevokeAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { sessionsKey } from './get-sessions';

export const revokeSession = (prefix: string) => apiPost<RevokeAnswer>(`/sessions/${encodeURIComponent(prefix)}/revoke`);

export const useRevokeSession = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: revokeSession, onSettled: () => qc.invalidateQueries({ queryKey: sessionsKey }) });
};
