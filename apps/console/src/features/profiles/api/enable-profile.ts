import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ProfileEnableAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { profilesKey } from './get-profiles';

/** `svc relay profiles enable <name>`: the relay's plugin added to the profile's config (`profile.relay_enabled`). */
export const enableProfile = (name: string) => apiPost<ProfileEnableAnswer>(`/profiles/${encodeURIComponent(name)}/enable`);

export const useEnableProfile = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: enableProfile, onSettled: () => qc.invalidateQueries({ queryKey: profilesKey }) });
};
