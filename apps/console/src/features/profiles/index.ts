import { IconProfiles } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { profilesKey } from './api/get-profiles';
import { ProfilesPage } from './components/profiles-page';

export const profilesFeature: ConsoleFeature = {
  id: 'profiles',
  path: '/profiles',
  title: 'Profiles',
  icon: IconProfiles,
  Page: ProfilesPage,
  invalidate: [{ on: ['profile.', 'relay.started'], queryKey: profilesKey }],
};
