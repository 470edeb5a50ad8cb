import { IconVoice } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { voiceKey } from './api/get-voice';
import { VoicePage } from './components/voice-page';

export const voiceFeature: ConsoleFeature = {
  id: 'voice',
  path: '/voice',
  title: 'Voice',
  icon: IconVoice,
  Page: VoicePage,
  invalidate: [{ on: ['voice.', 'relay.security_changed', 'relay.started'], queryKey: voiceKey }],
};
