import pino from 'pino';
import { Secrets } from '../common/auth/secrets';
import { relayDir } from '../common/config/config';
import { type RelayConfig } from '../common/config/relay-config';
import { SystemClock } from '../common/loop/clock';
import { CommandLoop } from '../common/loop/command-loop';
import { fileStore } from '../common/loop/file-store';
import { postgresStore } from '../common/loop/postgres-store';
import type { openKeyStore } from '../personal/open-key-store';
import { PersonalSealer } from '../personal/personal-sealer';

/**
 * The home's command loop opened by a CLI command while no relay runs on it (forget, prune): the relay's
 * own store, secrets and sealer, a silent logger, and a fatal error thrown to the command instead of
 * ending a process. The caller holds the home's lock and closes the loop.
 */
export function openOfflineLoop(config: RelayConfig, keys: Awaited<ReturnType<typeof openKeyStore>>): Promise<CommandLoop> {
  return CommandLoop.open({
    store: config.eventStoreUrl ? postgresStore(config.eventStoreUrl) : fileStore(relayDir(config), config.segmentBytes),
    secrets: Secrets.load(relayDir(config)),
    clock: new SystemClock(),
    logger: pino({ level: 'silent' }),
    snapshotEvery: config.snapshotEvery,
    sealer: new PersonalSealer(keys, config.personalDataKeysPerHour),
    onFatal: (err) => {
      throw err;
    },
  });
}
