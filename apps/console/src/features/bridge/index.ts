import { IconBridge } from '@/components/icons';
import type { ConsoleFeature } from '@/lib/feature';
import { bridgeKey } from './api/get-bridge';
import { secretsKey } from './api/secrets';
import { BridgePage } from './components/bridge-page';

export const bridgeFeature: ConsoleFeature = {
  id: 'bridge',
  path: '/bridge',
  title: 'Bridge',
  icon: IconBridge,
  Page: BridgePage,
  invalidate: [
    { on: ['bridge.', 'phone.disconnected', 'session.revoked', 'session.expired', 'relay.started'], queryKey: bridgeKey },
    // A secret's "last used" moves with the command that typed it.
    { on: ['secret.', 'personal.forgotten', 'bridge.command_sent'], queryKey: secretsKey },
  ],
};
