import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiPost } from '@/lib/api-client';
import { sessionsKey } from './get-sessions';

/** Ends a device's trusted-device renewal (its refresh token); its live session stays. */
export const endTrust = (prefix: string) =>
  apiPost<{ ok: true; device_id: string; trust_ended: true }>(`/sessions/${encodeURIComponent(prefix)}/end-trust`);

export const useEndTrust = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: endTrust, onSettled: () => qc.invalidateQueries({ queryKey: sessionsKey }) });
};
