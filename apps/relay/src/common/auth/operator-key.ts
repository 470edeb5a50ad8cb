import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFileExclusive } from '@svc/events';

/** The header the CLI, the tests and any local tool send the key in. */
export const OPERATOR_KEY_HEADER = 'x-operator-key';
const KEY_RE = /^[A-Za-z0-9_-]{43,128}$/;

/** Where a home keeps its operator key: `<home>/relay/operator.key`. */
export function operatorKeyFile(relayDir: string): string {
  return path.join(relayDir, 'operator.key');
}

/**
 * The operator's credential (issue 34): 32 random bytes as base64url text on one line, made at first start
 * in `<home>/relay/operator.key` (0600). Whoever can read that file is the operator: the console API and
 * every operator action need it (`X-Operator-Key`, `Authorization: Bearer <key>`, or the console's cookie
 * from a one-time sign-in link). A peer's address is never enough: a same-host proxy or tunnel makes the
 * whole world loopback. Model: Syncthing's and Jupyter's local admin, which trust a key, not a port.
 */
export class OperatorKey {
  private constructor(private readonly digest: Buffer) {}

  /** Loads the home's key, making it on first start; refuses a file that holds no key (a person must look). */
  static load(relayDir: string): OperatorKey {
    fs.mkdirSync(relayDir, { recursive: true, mode: 0o700 });
    const file = operatorKeyFile(relayDir);
    let key: string;
    try {
      key = fs.readFileSync(file, 'utf8').trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      key = randomBytes(32).toString('base64url');
      // Two relays starting at once on a fresh home: the second reads the first one's key.
      if (!createFileExclusive(file, key + '\n')) key = fs.readFileSync(file, 'utf8').trim();
    }
    if (!KEY_RE.test(key))
      throw new Error(`${file} does not hold an operator key (43+ base64url characters on one line); delete it to make a new one`);
    // Whoever reads the file is the operator: it stays the relay user's alone, whatever the umask made it.
    fs.chmodSync(file, 0o600);
    return new OperatorKey(sha256(key));
  }

  /** Whether `given` is the key (constant time: digests of equal length are compared). */
  matches(given: string): boolean {
    return timingSafeEqual(sha256(given), this.digest);
  }
}

/** For the CLI: the key of the home it is pointed at, or null when none is readable (no relay ever started there). */
export function readOperatorKey(relayDir: string): string | null {
  try {
    const key = fs.readFileSync(operatorKeyFile(relayDir), 'utf8').trim();
    return KEY_RE.test(key) ? key : null;
  } catch {
    return null;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
