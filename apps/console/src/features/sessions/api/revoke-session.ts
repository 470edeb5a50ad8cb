import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { RevokeAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { personalDataKey } from './get-personal-data';
import { sessionsKey } from './get-sessions';

/** `forget`: also destroy the data keys of its notification, Thread and recorded shell content (the answer counts them). */
export type RevokeInput = { prefix: string; forget: boolean };

export const revokeSession = ({ prefix, forget }: RevokeInput) =>
  apiPost<RevokeAnswer>(`/sessions/${encodeURIComponent(prefix)}/revoke`, forget ? { forget: true } : {});

export const useRevokeSession = () => {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: revokeSession,
    onSettled: () => Promise.all([qc.invalidateQueries({ queryKey: sessionsKey }), qc.invalidateQueries({ queryKey: personalDataKey })]),
  });
};
