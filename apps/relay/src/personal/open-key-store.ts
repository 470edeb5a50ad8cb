import { relayDir } from '../common/config/config';
import { type RelayConfig } from '../common/config/relay-config';
import { kekPath, loadKek } from '../standby/shared-secrets';
import { FileKeyStore, type PersonalKeyStore } from './key-store';
import { PgKeyStore } from './pg-key-store';

/**
 * The data keys beside the log: a file under the home for the file log, a table in the log's database for
 * PostgreSQL, sealed there under the home's key-encryption key (made here when the home has none and no
 * row is sealed yet; a standby's comes from `svc relay standby init`). `upgrade` (a leader's start) seals
 * rows older versions wrote in the clear.
 */
export async function openKeyStore(
  config: Pick<RelayConfig, 'eventStoreUrl'> & Parameters<typeof relayDir>[0],
  opts: { upgrade?: boolean } = {},
): Promise<PersonalKeyStore> {
  const dir = relayDir(config);
  if (!config.eventStoreUrl) return FileKeyStore.open(dir);
  return PgKeyStore.open(config.eventStoreUrl, { where: kekPath(dir), load: (create) => loadKek(dir, create) }, opts);
}
