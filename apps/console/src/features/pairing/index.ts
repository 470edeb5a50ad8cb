import { IconPairing } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { blocksKey } from './api/get-blocks';
import { pairingKey } from './api/get-pairing';
import { PairingPage, PendingBadge } from './components/pairing-page';

export const pairingFeature: ConsoleFeature = {
  id: 'pairing',
  path: '/pairing',
  title: 'Pairing',
  icon: IconPairing,
  Page: PairingPage,
  Badge: PendingBadge,
  invalidate: [
    { on: ['pairing.', 'session.created', 'relay.started'], queryKey: pairingKey },
    { on: ['ratelimit.'], queryKey: blocksKey },
  ],
};
