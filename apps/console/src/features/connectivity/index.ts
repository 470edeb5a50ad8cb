import { IconConnectivity } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { connectivityKey } from './api/get-connectivity';
import { ConnectivityPage } from './components/connectivity-page';

export const connectivityFeature: ConsoleFeature = {
  id: 'connectivity',
  path: '/connectivity',
  title: 'Connectivity',
  icon: IconConnectivity,
  Page: ConnectivityPage,
  invalidate: [{ on: ['secure_link.', 'relay.started'], queryKey: connectivityKey }],
};
