import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ProfileWriteAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { profilesKey } from './get-profiles';

/** Which file: the profile's SOUL.md, or one of its memory files. */
export type ProfileFileRef = { profile: string; memory: string | null };

export type ProfileFileWrite = ProfileFileRef & { content: string; ifMatch: string | null };

/**
 * The phone routes' If-Match write: `ifMatch` is the ETag the text was read with (null: the file did not
 * exist), so an edit made over someone else's is refused (412 `profile.stale`) instead of replacing it.
 */
export const writeProfileFile = ({ profile, memory, content, ifMatch }: ProfileFileWrite) =>
  apiPost<ProfileWriteAnswer>(`/profiles/${encodeURIComponent(profile)}/${memory === null ? 'soul' : `memory/${encodeURIComponent(memory)}`}`, {
    content,
    if_match: ifMatch,
  });

export const useWriteProfileFile = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: writeProfileFile, onSettled: () => qc.invalidateQueries({ queryKey: profilesKey }) });
};
