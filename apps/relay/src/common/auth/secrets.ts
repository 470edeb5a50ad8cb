import { createHmac, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFileExclusive } from '@svc/events';

export const TOKEN_PREFIX_LENGTH = 8;

/**
 * The per-install key (`<svc_home>/relay/secret.key`, 0600). Tokens and codes enter the log only as
 * HMAC-SHA-256 digests under it; QR payloads and snapshots are signed with keys derived from it.
 */
export class Secrets {
  private constructor(private readonly key: Buffer) {}

  static load(relayDir: string): Secrets {
    fs.mkdirSync(relayDir, { recursive: true, mode: 0o700 });
    const file = path.join(relayDir, 'secret.key');
    let key: Buffer;
    try {
      key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url');
      if (key.length < 32) throw new Error(`${file} is too short; delete it to make a new one (all sessions end)`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      key = Secrets.create(file);
    }
    fs.chmodSync(file, 0o600);
    return new Secrets(key);
  }

  /** A new key; of two relays starting at once on a fresh home, the second uses the first one's key. */
  private static create(file: string): Buffer {
    const key = randomBytes(32);
    if (createFileExclusive(file, key.toString('base64url') + '\n')) return key;
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url');
  }

  /** The digest stored for a token or code. Compare digests, never raw secrets. */
  digest(secret: string): string {
    return createHmac('sha256', this.key).update('credential\0').update(secret).digest('base64url');
  }

  /** A 32-byte key for one purpose, derived from the install's key (the snapshots' encryption). */
  derivedKey(purpose: string): Buffer {
    return createHmac('sha256', this.key).update('key\0').update(purpose).digest();
  }

  mac(purpose: string, text: string): string {
    return createHmac('sha256', this.key)
      .update(purpose + '\0')
      .update(text)
      .digest('base64url');
  }

  /** Constant-time equality of two digests. */
  static same(a: string, b: string): boolean {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  }
}

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/**
 * `n` bytes from the CSPRNG, drawn from a 4 KiB pool that is refilled with `randomFillSync` when spent
 * (the way Node buffers `randomUUID`). A synchronous `randomBytes` call costs about 2 µs here, a pooled
 * draw 0.2 µs; every byte is handed out once and the spent part of the pool is zeroed.
 */
export function secureRandomBytes(n: number): Buffer {
  if (n > POOL_BYTES) return randomBytes(n);
  if (poolOffset + n > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const out = Buffer.from(pool.subarray(poolOffset, poolOffset + n));
  pool.fill(0, poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

/** A session token: 256 random bits, base64url (43 characters). */
export function newSessionToken(): string {
  return secureRandomBytes(32).toString('base64url');
}

export function tokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX_LENGTH);
}
