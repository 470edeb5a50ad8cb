import { MAX_FILE_JSON_DEPTH, parseJsonBounded } from '@svc/events';

/** The archive's last entry: what the backup holds, so a restore can prove every byte before using any. */
export const MANIFEST_NAME = 'MANIFEST.json';
export const BACKUP_FORMAT = 'svc-relay-backup/1';
/** Every other entry sits under this folder: the home as it is laid out. */
export const HOME_PREFIX = 'home/';
/** A manifest past this is refused before it is parsed (one of 100k files is ~150 bytes). */
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;

export type ManifestFile = { path: string; bytes: number; sha256: string };

export type BackupManifest = {
  format: typeof BACKUP_FORMAT;
  relay_version: string;
  created_at: string;
  /** The store the log was read from (the archive holds it as file segments either way). */
  store: 'file' | 'postgres';
  /** The last record backed up: the log in the archive ends exactly here. */
  head: { seq: number; hash: string };
  /** The snapshot's seq (never past the head), or null when none was taken. */
  snapshot_seq: number | null;
  files: ManifestFile[];
};

export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The manifest's text, checked in shape (a backup is a hostile file until proven). */
export function parseManifest(text: string): BackupManifest {
  let m: Partial<BackupManifest> & Record<string, unknown>;
  try {
    m = parseJsonBounded(text, MAX_FILE_JSON_DEPTH) as typeof m;
  } catch {
    throw new ManifestError('the manifest is not JSON');
  }
  if (typeof m !== 'object' || m === null) throw new ManifestError('the manifest is not an object');
  if (m.format !== BACKUP_FORMAT) {
    throw new ManifestError(
      `the manifest's format is ${JSON.stringify(m.format)}, not ${BACKUP_FORMAT}: a newer relay made it, or it is not a backup`,
    );
  }
  const head = m.head as { seq?: unknown; hash?: unknown } | undefined;
  if (!head || !Number.isSafeInteger(head.seq) || (head.seq as number) < 1 || typeof head.hash !== 'string' || !HEX64.test(head.hash)) {
    throw new ManifestError('the manifest has no valid head (seq and hash)');
  }
  if (m.store !== 'file' && m.store !== 'postgres') throw new ManifestError('the manifest names no store');
  if (m.snapshot_seq !== null && (!Number.isSafeInteger(m.snapshot_seq) || (m.snapshot_seq as number) > (head.seq as number))) {
    throw new ManifestError('the manifest names a snapshot past its head');
  }
  if (!Array.isArray(m.files)) throw new ManifestError('the manifest lists no files');
  for (const f of m.files as unknown[]) {
    const x = f as Partial<ManifestFile>;
    if (typeof x?.path !== 'string' || !Number.isSafeInteger(x.bytes) || typeof x.sha256 !== 'string' || !HEX64.test(x.sha256)) {
      throw new ManifestError(`the manifest has a malformed file entry (${JSON.stringify(f).slice(0, 120)})`);
    }
  }
  return m as BackupManifest;
}
