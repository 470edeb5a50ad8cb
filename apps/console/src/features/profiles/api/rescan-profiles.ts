import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ProfileRescanAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { profilesKey } from './get-profiles';

/** Looks at the profile tree now instead of at the next 30-second rescan. */
export const rescanProfiles = () => apiPost<ProfileRescanAnswer>('/profiles/rescan');

export const useRescanProfiles = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: rescanProfiles, onSettled: () => qc.invalidateQueries({ queryKey: profilesKey }) });
};
