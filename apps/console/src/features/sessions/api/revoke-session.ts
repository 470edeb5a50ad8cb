import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPost } from '@/lib/api-client';
import { sessionsKey } from './get-sessions';

export const revokeSession = (prefix: string) =>
  apiPost<{ ok: true; revoked: string; revoked_self: boolean }>(`/sessions/${encodeURIComponent(prefix)}/revoke`);

export const useRevokeSession = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: revokeSession, onSettled: () => qc.invalidateQueries({ queryKey: sessionsKey }) });
};
