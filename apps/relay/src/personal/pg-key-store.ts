import { connectPg, isPersonalKeyId, pgReason, redactPgUrl, type PgClient } from '@svc/events';
import { KeyMap, type PersonalKeyStore } from './key-store';

export const KEY_TABLE = 'svc_relay_personal_keys';

/**
 * Data keys in a table beside a PostgreSQL log (the log's database), on a connection of their own, all
 * held in memory (loaded at open). A new key's INSERT is sent at once; the events it seals are
 * acknowledged only after it committed. Destroying deletes the rows and vacuums the table, so the key
 * bytes do not linger in dead rows.
 */
export class PgKeyStore implements PersonalKeyStore {
  private readonly keys = new KeyMap();

  private constructor(
    private readonly client: PgClient,
    readonly where: string,
  ) {}

  static async open(url: string): Promise<PgKeyStore> {
    const client = await connectPg(url, 'snapshots');
    client.on('error', () => undefined);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${KEY_TABLE} (id text PRIMARY KEY, key bytea NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
      );
      const store = new PgKeyStore(client, `${redactPgUrl(url)} (table ${KEY_TABLE})`);
      const rows = await client.query<{ id: string; key: Buffer }>(`SELECT id, key FROM ${KEY_TABLE}`);
      for (const r of rows.rows) if (isPersonalKeyId(r.id) && r.key.length === 32) store.keys.set(r.id, r.key);
      return store;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new Error(`personal data keys: ${pgReason(err)}`);
    }
  }

  async sync(): Promise<void> {
    const rows = await this.client.query<{ id: string; key: Buffer }>(`SELECT id, key FROM ${KEY_TABLE}`);
    const present = new Set<string>();
    for (const r of rows.rows) {
      if (!isPersonalKeyId(r.id) || r.key.length !== 32) continue;
      present.add(r.id);
      if (!this.keys.has(r.id)) this.keys.set(r.id, r.key);
    }
    // A key the leader destroyed (a forgetting) must not stay readable here.
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
      .query(`INSERT INTO ${KEY_TABLE} (id, key) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [id, key])
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
}
