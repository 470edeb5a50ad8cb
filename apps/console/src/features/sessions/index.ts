import { IconDevices } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { sessionsKey } from './api/get-sessions';
import { DevicesPage } from './components/devices-page';

export const sessionsFeature: ConsoleFeature = {
  id: 'sessions',
  path: '/devices',
  title: 'Devices',
  icon: IconDevices,
  Page: DevicesPage,
  invalidate: [{ on: ['session.', 'trust.', 'phone.connected', 'phone.disconnected', 'relay.started'], queryKey: sessionsKey }],
};
