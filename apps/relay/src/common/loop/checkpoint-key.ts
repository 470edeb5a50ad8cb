import { createFileExclusive } from '@svc/events';
import { keyIdOf, publicKeyText } from '@svc/events/checkpoint';
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The key file beside the relay's other keys: a PKCS#8 PEM, 0600. */
export const CHECKPOINT_KEY_FILE = 'checkpoint-key.pem';
const MAX_KEY_FILE_BYTES = 16 * 1024;

export type CheckpointKey = {
  file: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Base64 of the raw 32 bytes: what an auditor copies. */
  publicKeyText: string;
  keyId: string;
  /** True when this call made the key. */
  created: boolean;
};

export const checkpointKeyFile = (svcHome: string): string => path.join(svcHome, 'relay', CHECKPOINT_KEY_FILE);

/**
 * The relay's checkpoint signing key (Ed25519), made once under the home. Of two makers at once (the
 * relay and a CLI), the first file wins and the second reads it: a key is never replaced, since every
 * public key an auditor copied would stop matching. Null when it does not exist and `create` is false.
 */
export function loadCheckpointKey(svcHome: string, opts: { create: boolean }): CheckpointKey | null {
  const file = checkpointKeyFile(svcHome);
  let created = false;
  if (!fs.existsSync(file)) {
    if (!opts.create) return null;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    created = createFileExclusive(file, pem);
    if (created) syncDurably(file);
  }
  const privateKey = readPrivateKey(file);
  const publicKey = createPublicKey(privateKey);
  return { file, privateKey, publicKey, publicKeyText: publicKeyText(publicKey), keyId: keyIdOf(publicKey), created };
}

function readPrivateKey(file: string): KeyObject {
  const size = fs.statSync(file).size;
  if (size > MAX_KEY_FILE_BYTES) throw new Error(`${file} is ${size} bytes: not a checkpoint key`);
  // The relay's user keeps it to itself, whatever a copy or an editor left.
  try {
    fs.chmodSync(file, 0o600);
  } catch {
    /* not ours to change; reading still works */
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: fs.readFileSync(file, 'utf8'), format: 'pem' });
  } catch {
    throw new Error(
      `${file} does not hold a private key (move it aside to make a new one: older checkpoints then verify only with the old public key)`,
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file} holds an ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return key;
}

/** A key that vanished in a power cut after its public half was handed out would orphan every checkpoint. */
function syncDurably(file: string): void {
  for (const target of [file, path.dirname(file)]) {
    const fd = fs.openSync(target, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}
