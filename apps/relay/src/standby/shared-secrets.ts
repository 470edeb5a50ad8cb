import { connectPg, createFileExclusive, pgReason, redactPgUrl, type PgClient } from '@svc/events';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';

/**
 * What two relays on one database must share to accept the same tokens, the same operator and the same
 * sealed snapshots: the files below, sealed in the database under a key-encryption key (KEK) each host
 * keeps in its home. The leader publishes its copies at start; a standby writes the database's copies
 * into its home before it loads them. The KEK is the one file an operator copies, once (`svc relay
 * standby init`); the data keys already live in the database (PgKeyStore), each sealed under the same KEK.
 */
export const SHARED_FILES = ['secret.key', 'operator.key', 'checkpoint-key.pem'] as const;
export const KEK_FILE = 'standby.kek';
export const SHARED_TABLE = 'svc_relay_shared_secrets';
const MAX_SECRET_BYTES = 16 * 1024;

export class SharedSecretsError extends Error {}

export const kekPath = (relayDir: string): string => path.join(relayDir, KEK_FILE);

/** The home's KEK (32 bytes, base64url, 0600), made when `create` and missing. */
export function loadKek(relayDir: string, create: boolean): Buffer | null {
  const file = kekPath(relayDir);
  if (!fs.existsSync(file)) {
    if (!create) return null;
    fs.mkdirSync(relayDir, { recursive: true, mode: 0o700 });
    createFileExclusive(file, randomBytes(32).toString('base64url') + '\n');
  }
  return parseKek(fs.readFileSync(file, 'utf8'), file);
}

/** A standby's KEK, or why it cannot start without one. */
export function requireKek(relayDir: string): Buffer {
  const kek = loadKek(relayDir, false);
  if (!kek)
    throw new SharedSecretsError(
      `a standby needs ${kekPath(relayDir)}: prepare this home with "svc relay standby init --from <the leader's home or its ${KEK_FILE}>"`,
    );
  return kek;
}

export function parseKek(text: string, where: string): Buffer {
  const key = Buffer.from(text.trim().slice(0, 100), 'base64url');
  if (key.length !== 32) throw new SharedSecretsError(`${where} is not a key-encryption key (32 bytes, base64url)`);
  return key;
}

/** AES-256-GCM under the KEK: `iv (12) || ciphertext || tag (16)`, with `aad` bound in (what the bytes are for). */
export function sealUnderKek(kek: Buffer, aad: string, body: Buffer): Buffer {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', kek, iv);
  c.setAAD(Buffer.from(aad));
  return Buffer.concat([iv, c.update(body), c.final(), c.getAuthTag()]);
}

/** What `sealUnderKek` sealed, or null: another KEK, another `aad`, altered bytes, or a body longer than `maxBody`. */
export function openUnderKek(kek: Buffer, aad: string, sealed: Buffer, maxBody: number): Buffer | null {
  if (sealed.length < 12 + 16 + 1 || sealed.length > 12 + maxBody + 16) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', kek, sealed.subarray(0, 12));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
  } catch {
    return null;
  }
}

// The database's text form: `base64(iv).base64(ciphertext || tag)`. The name is bound in: a sealed
// secret.key cannot be passed off as operator.key.
function seal(kek: Buffer, name: string, body: Buffer): string {
  const sealed = sealUnderKek(kek, name, body);
  return `${sealed.subarray(0, 12).toString('base64')}.${sealed.subarray(12).toString('base64')}`;
}

function open(kek: Buffer, name: string, sealed: string): Buffer | null {
  const [ivText, ctText] = sealed.split('.', 2);
  const iv = Buffer.from(ivText ?? '', 'base64');
  if (iv.length !== 12 || (ctText ?? '').length > ((MAX_SECRET_BYTES + 16) * 4) / 3 + 4) return null;
  return openUnderKek(kek, name, Buffer.concat([iv, Buffer.from(ctText ?? '', 'base64')]), MAX_SECRET_BYTES);
}

async function withTable<T>(url: string, fn: (c: PgClient) => Promise<T>): Promise<T> {
  const c = await connectPg(url, 'snapshots');
  c.on('error', () => undefined);
  try {
    await c.query(
      `CREATE TABLE IF NOT EXISTS ${SHARED_TABLE} (name text PRIMARY KEY, sealed text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
    );
    return await fn(c);
  } catch (err) {
    if (err instanceof SharedSecretsError) throw err;
    throw new SharedSecretsError(`shared secrets in ${redactPgUrl(url)}: ${pgReason(err)}`);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The leader: its home's shared files, sealed into the database (the database's copy follows the leader). */
export async function publishSharedSecrets(url: string, relayDir: string): Promise<{ published: string[]; replaced: boolean }> {
  const kek = loadKek(relayDir, true)!;
  return withTable(url, async (c) => {
    const replaced = await otherKek(c, kek);
    const published: string[] = [];
    for (const name of SHARED_FILES) {
      const file = path.join(relayDir, name);
      if (!fs.existsSync(file)) continue;
      const body = fs.readFileSync(file);
      if (body.length > MAX_SECRET_BYTES) continue;
      await c.query(`INSERT INTO ${SHARED_TABLE} (name, sealed) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET sealed = $2, updated_at = now()`, [
        name,
        seal(kek, name, body),
      ]);
      published.push(name);
    }
    return { published, replaced };
  });
}

/** A standby (and `standby init`): the database's shared files written into this home (0600). */
export async function pullSharedSecrets(url: string, relayDir: string, kek: Buffer): Promise<string[]> {
  return withTable(url, async (c) => {
    const rows = (await c.query<{ name: string; sealed: string }>(`SELECT name, sealed FROM ${SHARED_TABLE}`)).rows;
    const written: string[] = [];
    for (const name of SHARED_FILES) {
      const row = rows.find((r) => r.name === name);
      if (!row) continue;
      const body = open(kek, name, row.sealed);
      if (!body) throw new SharedSecretsError(kekMismatch(relayDir));
      fs.mkdirSync(relayDir, { recursive: true, mode: 0o700 });
      atomicWrite(path.join(relayDir, name), body.toString('utf8'), { mode: 0o600 });
      written.push(name);
    }
    if (!written.includes('secret.key'))
      throw new SharedSecretsError(`the database holds no shared secrets yet: start the leader (on PostgreSQL) once before its standby`);
    return written;
  });
}

/** Whether the database holds copies sealed under another KEK (another home led this log before). */
async function otherKek(c: PgClient, kek: Buffer): Promise<boolean> {
  const r = await c.query<{ sealed: string }>(`SELECT sealed FROM ${SHARED_TABLE} WHERE name = 'secret.key'`);
  return r.rows[0] !== undefined && !open(kek, 'secret.key', r.rows[0].sealed);
}

function kekMismatch(relayDir: string): string {
  return (
    `the key-encryption key in ${kekPath(relayDir)} does not open the database's shared secrets: ` +
    `this home was not prepared from the leader's (run "svc relay standby init --from <the leader's home or its ${KEK_FILE}>")`
  );
}
