import { relayDir } from '../common/config/config';
import { type RelayConfig } from '../common/config/relay-config';
import { FileKeyStore, type PersonalKeyStore } from './key-store';
import { PgKeyStore } from './pg-key-store';

/** The data keys beside the log: a file under the home for the file log, a table in the log's database for PostgreSQL. */
export async function openKeyStore(config: Pick<RelayConfig, 'eventStoreUrl'> & Parameters<typeof relayDir>[0]): Promise<PersonalKeyStore> {
  return config.eventStoreUrl ? PgKeyStore.open(config.eventStoreUrl) : FileKeyStore.open(relayDir(config));
}
