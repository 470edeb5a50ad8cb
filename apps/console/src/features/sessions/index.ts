import { IconDevices } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { personalDataKey } from './api/get-personal-data';
import { sessionsKey } from './api/get-sessions';
import { DevicesPage } from './components/devices-page';

export const sessionsFeature: ConsoleFeature = {
  id: 'sessions',
  path: '/devices',
  title: 'Devices',
  icon: IconDevices,
  Page: DevicesPage,
  invalidate: [
    { on: ['session.', 'trust.', 'phone.connected', 'phone.disconnected', 'relay.started'], queryKey: sessionsKey },
    // Forgettings, and content that makes a new hourly key (the view counts keys per device and names devices by session).
    { on: ['personal.', 'notification.posted', 'phone.message_posted', 'phone.reply_received', 'session.'], queryKey: personalDataKey },
  ],
};
