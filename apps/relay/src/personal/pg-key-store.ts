import { connectPg, isPersonalKeyId, pgReason, redactPgUrl, type PgClient } from '@svc/events';
import { openUnderKek, sealUnderKek } from '../standby/shared-secrets';
import { KeyMap, type PersonalKeyStore } from './key-store';

export const KEY_TABLE = 'svc_relay_personal_keys';
export const KEY_TABLE_DDL = `CREATE TABLE IF NOT EXISTS ${KEY_TABLE} (id text PRIMARY KEY, key bytea NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`;

/**
 * A data key as a row holds it: `0x01 || iv (12) || sealed key (32) || tag (16)`, sealed under the home's
 * key-encryption key (standby.kek, which a standby shares) with the key's id bound in, so a row moved to
 * another id does not open. Earlier versions wrote the 32 key bytes as they are: still read, and
 * sealed in place by the next leader's start.
 */
const WRAPPED = 0x01;
const WRAPPED_BYTES = 1 + 12 + 32 + 16;
const aad = (id: string): string => `svc-relay personal data key ${id}`;

export class KeyWrapError extends Error {}

/** Where the home's KEK is, and reading it (`create`: made when missing). */
export type KekSource = { where: string; load: (create: boolean) => Buffer | null };

async function readRows(client: PgClient): Promise<Array<{ id: string; key: Buffer }>> {
  return (await client.query<{ id: string; key: Buffer }>(`SELECT id, key FROM ${KEY_TABLE}`)).rows;
}

export function wrapDataKey(kek: Buffer, id: string, key: Buffer): Buffer {
  return Buffer.concat([Buffer.of(WRAPPED), sealUnderKek(kek, aad(id), key)]);
}

/** A row's key: unsealed, or as it is (a row written before keys were sealed); null when the KEK does not open it. */
export function unwrapDataKey(kek: Buffer, id: string, stored: Buffer): { key: Buffer; legacy: boolean } | null {
  if (stored.length === 32) return { key: stored, legacy: true };
  if (stored.length !== WRAPPED_BYTES || stored[0] !== WRAPPED) return null;
  const key = openUnderKek(kek, aad(id), stored.subarray(1), 32);
  return key?.length === 32 ? { key, legacy: false } : null;
}

/** The keys of a table's rows, or why this KEK cannot open them (never a silent skip: a key not loaded is content lost). */
export function unwrapRows(
  kek: Buffer,
  rows: ReadonlyArray<{ id: string; key: Buffer }>,
  kekWhere: string,
): { keys: Map<string, Buffer>; legacy: string[] } {
  const keys = new Map<string, Buffer>();
  const legacy: string[] = [];
  let closed = 0;
  for (const r of rows) {
    if (!isPersonalKeyId(r.id)) continue;
    const opened = unwrapDataKey(kek, r.id, r.key);
    if (!opened) closed++;
    else {
      keys.set(r.id, opened.key);
      if (opened.legacy) legacy.push(r.id);
    }
  }
  if (closed > 0)
    throw new KeyWrapError(
      `the key-encryption key in ${kekWhere} does not open ${closed} of the database's ${rows.length} personal data keys: ` +
        `this home was not prepared from the leader's (run "svc relay standby init --from <the leader's home or its standby.kek>", ` +
        `or put back the standby.kek from a backup of the home that made them)`,
    );
  return { keys, legacy };
}

/**
 * Data keys in a table beside a PostgreSQL log (the log's database), on a connection of their own, all
 * held in memory (loaded at open), sealed in the table under the home's KEK. A new key's INSERT is sent at
 * once; the events it seals are acknowledged only after it committed. Destroying deletes the rows and
 * vacuums the table, so the sealed bytes do not linger in dead rows.
 */
export class PgKeyStore implements PersonalKeyStore {
  private readonly keys = new KeyMap();

  private constructor(
    private readonly client: PgClient,
    private readonly kek: Buffer,
    private readonly kekWhere: string,
    readonly where: string,
  ) {}

  /**
   * `kek.load(create)`: the home's KEK, made when missing only while no row is sealed yet (a home without
   * one must not start over beside keys sealed under another). `upgrade`: seal rows written before keys
   * were sealed (the leader, at start; a standby only reads).
   */
  static async open(url: string, kek: KekSource, opts: { upgrade?: boolean } = {}): Promise<PgKeyStore> {
    const client = await connectPg(url, 'snapshots');
    client.on('error', () => undefined);
    try {
      await client.query(KEY_TABLE_DDL);
      const rows = await readRows(client);
      const key = kek.load(rows.every((r) => r.key.length === 32));
      if (!key)
        throw new KeyWrapError(
          `${kek.where} is missing, and the database's personal data keys are sealed under a key-encryption key: ` +
            `put back the standby.kek of the home that made them (it is in that home's backups), or prepare this home with "svc relay standby init"`,
        );
      const store = new PgKeyStore(client, key, kek.where, `${redactPgUrl(url)} (table ${KEY_TABLE}, sealed under ${kek.where})`);
      const { keys, legacy } = unwrapRows(key, rows, kek.where);
      for (const [id, k] of keys) store.keys.set(id, k);
      if (opts.upgrade && legacy.length > 0) await store.sealLegacy(legacy);
      return store;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (err instanceof KeyWrapError) throw err;
      throw new Error(`personal data keys: ${pgReason(err)}`);
    }
  }

  /**
   * With `need` (a standby's followed batch: the keys its records are sealed with), only those ids not held
   * yet are read, by primary key: a follow tick costs nothing at 100,000 keys (a forgetting reaches a
   * standby as its `personal.forgotten` record, which destroys the keys here too). Without, every row is
   * read (a full pass), and only rows not held yet are unsealed (a key never changes under its id).
   */
  async sync(need?: readonly string[]): Promise<void> {
    if (need) {
      const missing = [...new Set(need)].filter((id) => !this.keys.has(id));
      if (missing.length === 0) return;
      const found = await this.client.query<{ id: string; key: Buffer }>(`SELECT id, key FROM ${KEY_TABLE} WHERE id = ANY($1::text[])`, [missing]);
      for (const [id, key] of unwrapRows(this.kek, found.rows, this.kekWhere).keys) this.keys.set(id, key);
      return;
    }
    const rows = await readRows(this.client);
    const { keys } = unwrapRows(
      this.kek,
      rows.filter((r) => !this.keys.has(r.id)),
      this.kekWhere,
    );
    for (const [id, key] of keys) this.keys.set(id, key);
    // A key the leader destroyed (a forgetting) must not stay readable here.
    const present = new Set(rows.map((r) => r.id));
    for (const id of this.keys.ids()) if (!present.has(id)) this.keys.delete(id);
  }

  get(id: string): Buffer | undefined {
    return this.keys.get(id);
  }

  current(slot: string, fresh = false): { id: string; key: Buffer; persisted: Promise<void> | null } {
    const have = fresh ? null : this.keys.inSlot(slot);
    if (have) return { ...have, persisted: null };
    const { id, key } = this.keys.make(slot);
    const persisted = this.client
      .query(`INSERT INTO ${KEY_TABLE} (id, key) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [id, wrapDataKey(this.kek, id, key)])
      .then(() => undefined)
      .catch((err: unknown) => {
        this.keys.delete(id);
        throw new Error(`personal data key not stored: ${pgReason(err)}`);
      });
    persisted.catch(() => undefined);
    return { id, key, persisted };
  }

  count(slot: string): number {
    return this.keys.count(slot);
  }

  ids(): string[] {
    return this.keys.ids();
  }

  async destroy(ids: readonly string[]): Promise<number> {
    const present = ids.filter((id) => this.keys.has(id));
    for (const id of present) this.keys.delete(id);
    if (ids.length === 0) return 0;
    await this.client.query(`DELETE FROM ${KEY_TABLE} WHERE id = ANY($1::text[])`, [ids]);
    await this.client.query(`VACUUM ${KEY_TABLE}`);
    return present.length;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  /**
   * Rows still holding plain key bytes, sealed in one transaction, 5,000 rows a statement; then vacuumed so
   * the plain bytes leave the table's pages. Only a row still as it was read is replaced: one sealed
   * meanwhile (another start) is left as it is.
   */
  private async sealLegacy(ids: readonly string[]): Promise<void> {
    await this.client.query('BEGIN');
    try {
      for (let i = 0; i < ids.length; i += 5000) {
        const page = ids.slice(i, i + 5000);
        const plain = page.map((id) => this.keys.get(id)!);
        await this.client.query(
          `UPDATE ${KEY_TABLE} AS t SET key = v.sealed FROM unnest($1::text[], $2::bytea[], $3::bytea[]) AS v(id, sealed, plain) ` +
            `WHERE t.id = v.id AND t.key = v.plain`,
          [page, page.map((id, j) => wrapDataKey(this.kek, id, plain[j])), plain],
        );
      }
      await this.client.query('COMMIT');
    } catch (err) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    await this.client.query(`VACUUM ${KEY_TABLE}`);
  }
}
