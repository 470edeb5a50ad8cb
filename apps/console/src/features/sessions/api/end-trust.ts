import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { EndTrustAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { sessionsKey } from './get-sessions';

/** Ends a device's trusted-device renewal (its refresh token); its live session stays. */
export const endTrust = (prefix: string) => apiPost<EndTrustAnswer>(`/sessions/${encodeURIComponent(prefix)}/end-trust`);

export const useEndTrust = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: endTrust, onSettled: () => qc.invalidateQueries({ queryKey: sessionsKey }) });
};
