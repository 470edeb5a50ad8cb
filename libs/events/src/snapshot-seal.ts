import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Snapshot } from './event-store';
import { MAX_FILE_JSON_DEPTH, parseJsonBounded } from './json-limits';

const ENCRYPTED = 'aes1:';

/**
 * Snapshots hold the read models, personal content included (Thread messages, notification text): at
 * rest their body is AES-256-GCM under a key derived from the install's key. Forgetting removes every
 * snapshot written before it (see CommandLoop.renewSnapshots), so none keeps what a destroyed key sealed.
 */
export class SnapshotCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a snapshot key is 32 bytes');
  }

  encrypt(text: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(text, 'utf8'), c.final(), c.getAuthTag()]);
    return ENCRYPTED + Buffer.concat([iv, body]).toString('base64');
  }

  /** The text, or null when it is not ours (another key, or not encrypted at all). */
  decrypt(sealed: string): string | null {
    if (!sealed.startsWith(ENCRYPTED)) return null;
    try {
      const raw = Buffer.from(sealed.slice(ENCRYPTED.length), 'base64');
      if (raw.length < 28) return null;
      const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      d.setAuthTag(raw.subarray(raw.length - 16));
      return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

/**
 * How every snapshot adapter stores a snapshot: its JSON text (encrypted when a cipher is given) and a MAC
 * of what is stored under the install's key, so a snapshot cannot be forged to change state without
 * breaking it. Serialized now: the models move on while it is stored.
 */
export function sealSnapshot<M>(
  snapshot: Snapshot<M>,
  macOf: (text: string) => string,
  cipher?: SnapshotCipher,
): { at: string; body: string; mac: string } {
  const text = JSON.stringify(snapshot);
  const body = cipher ? cipher.encrypt(text) : text;
  // `at` in the clear, first, for the console's Store page (a listing must not decrypt MiBs); the body holds it too, under the MAC.
  return { at: snapshot.at, body, mac: macOf(body) };
}

/**
 * A stored snapshot's body, if its MAC holds and (with a cipher) it opens (parsed bounded again past the
 * MAC: restoring walks the models, and the key may have leaked). With a cipher, a plain-text snapshot of
 * an older relay is not used (a full replay is).
 */
export function openSnapshot<M>(body: unknown, mac: unknown, macOf: (text: string) => string, cipher?: SnapshotCipher): Snapshot<M> | null {
  if (typeof body !== 'string' || typeof mac !== 'string' || mac !== macOf(body)) return null;
  const text = cipher ? cipher.decrypt(body) : body;
  if (text === null) return null;
  return parseJsonBounded(text, MAX_FILE_JSON_DEPTH) as Snapshot<M>;
}
