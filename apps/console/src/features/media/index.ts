import { IconMedia } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { mediaKey } from './api/get-media';
import { MediaPage } from './components/media-page';

export const mediaFeature: ConsoleFeature = {
  id: 'media',
  path: '/media',
  title: 'Media',
  icon: IconMedia,
  Page: MediaPage,
  invalidate: [{ on: ['media.', 'relay.started'], queryKey: mediaKey }],
};
