import { connectPg, copyLog, FileLogSource, MAX_FILE_JSON_DEPTH, parseJsonBounded, redactPgUrl, TABLE } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readKeyFile } from '../personal/key-store';
import { KEY_TABLE_DDL, KEY_TABLE, wrapDataKey } from '../personal/pg-key-store';
import { loadKek } from '../standby/shared-secrets';
import type { BackupManifest } from './backup-manifest';

/**
 * `restore --to postgres://...`: the backup's log goes into an empty database through the events copy
 * (proven on the way and read back), then its data keys and snapshot into the tables the relay keeps
 * beside it; the home gets everything else. Returns the database's printable location.
 */
export async function restoreIntoPostgres(tmp: string, url: string, manifest: BackupManifest): Promise<string> {
  const relay = path.join(tmp, 'relay');
  // Checked as the file store checks its own (ids, 32-byte keys, size), before anything goes into the
  // database: an archive is a file from elsewhere, and a bad one must not leave a half-restored database.
  const keys = readKeyFile(path.join(relay, 'personal-keys.json'));
  await copyLog(new FileLogSource(path.join(relay, 'events')), { kind: 'postgres', url });
  const snapshot =
    manifest.snapshot_seq === null ? null : path.join(relay, 'snapshots', `snapshot-${String(manifest.snapshot_seq).padStart(12, '0')}.json`);
  const client = await connectPg(url, 'writer');
  client.on('error', () => undefined);
  try {
    await client.query('BEGIN');
    await client.query(KEY_TABLE_DDL);
    if (keys) {
      // Sealed under the restored home's KEK (the backup's, or one made now when it held none: a home backed up from a file log).
      const kek = loadKek(relay, true)!;
      await client.query(`INSERT INTO ${KEY_TABLE} (id, key) SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT (id) DO NOTHING`, [
        keys.map(([id]) => id),
        keys.map(([id, key]) => wrapDataKey(kek, id, key)),
      ]);
    }
    if (snapshot && fs.existsSync(snapshot)) {
      const s = parseJsonBounded(fs.readFileSync(snapshot, 'utf8'), MAX_FILE_JSON_DEPTH) as { at: string; body: string; mac: string };
      await client.query(`INSERT INTO ${TABLE.snapshots} (seq, at, body, mac) VALUES ($1, $2, $3, $4)`, [manifest.snapshot_seq, s.at, s.body, s.mac]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
  // The home keeps no copy of what now lives in the database.
  for (const gone of ['events', 'snapshots', 'personal-keys.json']) fs.rmSync(path.join(relay, gone), { recursive: true, force: true });
  return redactPgUrl(url);
}
