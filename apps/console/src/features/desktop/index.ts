import { IconDesktop } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { desktopKey } from './api/get-desktop';
import { DesktopPage } from './components/desktop-page';

export const desktopFeature: ConsoleFeature = {
  id: 'desktop',
  path: '/desktop',
  title: 'Desktop',
  icon: IconDesktop,
  Page: DesktopPage,
  invalidate: [
    {
      on: [
        'desktop.',
        'phone.connected',
        'phone.disconnected',
        'session.created',
        'session.revoked',
        'session.expired',
        'session.grant_expired',
        'session.shortened',
        'relay.started',
      ],
      queryKey: desktopKey,
    },
  ],
};
