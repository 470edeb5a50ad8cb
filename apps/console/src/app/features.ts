import { bridgeFeature } from '@/features/bridge';
import { connectivityFeature } from '@/features/connectivity';
import { desktopFeature } from '@/features/desktop';
import { eventsFeature } from '@/features/events';
import { mediaFeature } from '@/features/media';
import { metricsFeature } from '@/features/metrics';
import { overviewFeature } from '@/features/overview';
import { pairingFeature } from '@/features/pairing';
import { profilesFeature } from '@/features/profiles';
import { sessionsFeature } from '@/features/sessions';
import { storeFeature } from '@/features/store';
import { terminalFeature } from '@/features/terminal';
import { threadsFeature } from '@/features/threads';
import { voiceFeature } from '@/features/voice';
import type { ConsoleFeature } from '@/lib/feature';

/**
 * Every page this build knows, in nav order. Adding one (bridge, media, threads, terminal) is a folder
 * under features/ and a line here; it shows only when the relay reports the same id.
 */
export const FEATURES: ConsoleFeature[] = [
  overviewFeature,
  sessionsFeature,
  pairingFeature,
  connectivityFeature,
  bridgeFeature,
  mediaFeature,
  threadsFeature,
  voiceFeature,
  profilesFeature,
  terminalFeature,
  desktopFeature,
  metricsFeature,
  storeFeature,
  eventsFeature,
];
