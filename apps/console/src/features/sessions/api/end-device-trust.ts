import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { EndDeviceTrustAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { sessionsKey } from './get-sessions';

/** Ends the renewal of a device whose session already expired (named by its device id). */
export const endDeviceTrust = (deviceId: string) => apiPost<EndDeviceTrustAnswer>('/sessions/end-device-trust', { device_id: deviceId });

export const useEndDeviceTrust = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: endDeviceTrust, onSettled: () => qc.invalidateQueries({ queryKey: sessionsKey }) });
};
