import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { VoiceSecurityAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { voiceKey } from './get-voice';

/** The plain-HTTP API-bearer escape hatch (`relay.security_changed`, until the relay restarts). */
export const setInsecureApiBearer = (allow: boolean) => apiPost<VoiceSecurityAnswer>('/voice/security', { allow_insecure_api_bearer: allow });

export const useSetInsecureApiBearer = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: setInsecureApiBearer, onSettled: () => qc.invalidateQueries({ queryKey: voiceKey }) });
};
