import * as path from 'node:path';
import { FileKeyStore } from '../../apps/relay/src/personal/key-store';

/** The data keys of a relay home (file log), read as an auditor with access to the home would: for `replayLog`. */
export function homeKeyFor(home: string): (keyId: string) => Buffer | undefined {
  const keys = FileKeyStore.open(path.join(home, 'relay'));
  return (id) => keys.get(id);
}
