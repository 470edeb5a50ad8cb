import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { VoiceSectionId, VoiceSwitchAnswer } from '@svc/console-api';
import { apiPost } from '@/lib/api-client';
import { voiceKey } from './get-voice';

/** The section's relay-wide switch (`voice.settings_changed`, the operator as actor). */
export const setSectionEnabled = ({ section, enabled }: { section: VoiceSectionId; enabled: boolean }) =>
  apiPost<VoiceSwitchAnswer>(`/voice/sections/${section}`, { enabled });

export const useSetSectionEnabled = () => {
  const qc = useQueryClient();
  return useMutation({ mutationFn: setSectionEnabled, onSettled: () => qc.invalidateQueries({ queryKey: voiceKey }) });
};
