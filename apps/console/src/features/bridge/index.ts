import { IconBridge } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { bridgeKey } from './api/get-bridge';
import { BridgePage } from './components/bridge-page';

export const bridgeFeature: ConsoleFeature = {
  id: 'bridge',
  path: '/bridge',
  title: 'Bridge',
  icon: IconBridge,
  Page: BridgePage,
  invalidate: [{ on: ['bridge.', 'phone.disconnected', 'session.revoked', 'session.expired', 'relay.started'], queryKey: bridgeKey }],
};
