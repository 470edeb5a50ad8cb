import * as fs from 'node:fs';
import * as path from 'node:path';
import { relayVersion } from '../common/config/version';
import { BACKUP_FORMAT, HOME_PREFIX, MANIFEST_NAME, type BackupManifest, type ManifestFile } from './backup-manifest';
import { homeFiles } from './home-files';
import { BackupRefusedError, fileLogParts, pgLogParts, type LogParts, type Part } from './log-parts';
import { fdChunks, TarWriter } from './ustar';

export { BackupRefusedError } from './log-parts';

export type BackupProgress = { bytes: number; totalBytes: number; records: number };

export type BackupReport = {
  out: string;
  store: 'file' | 'postgres';
  head: { seq: number; hash: string };
  snapshotSeq: number | null;
  files: number;
  bytes: number;
  records: number;
  /** Symbolic links found in the home and not followed (a backup holds regular files only). */
  links: string[];
};

/**
 * A consistent copy of a relay's home while the relay runs, taking no lock: the log up to a durable seq
 * (read first), then the keys and secrets (every data key the log up to there needs was stored before
 * its record was), recordings and settings, then the newest snapshot not past that seq, then the manifest.
 * Written 0600 to a temporary name beside `out` and renamed once whole, so `out` is never half a backup.
 */
export async function backupHome(opts: {
  home: string;
  /** A postgres:// URL when the relay's log is in a database. */
  storeUrl?: string;
  out: string;
  onProgress?: (p: BackupProgress) => void;
  now?: () => Date;
}): Promise<BackupReport> {
  const relayDir = path.join(opts.home, 'relay');
  if (!fs.existsSync(relayDir)) throw new BackupRefusedError(`no relay home at ${opts.home} (no relay/ folder): give --home, or set SVC_HOME`);
  if (fs.existsSync(opts.out)) throw new BackupRefusedError(`${opts.out} exists: give a new file name (a backup never overwrites a file)`);
  const progress: BackupProgress = { bytes: 0, totalBytes: 0, records: 0 };
  const onRecord = (): void => void progress.records++;
  const log: LogParts = opts.storeUrl ? await pgLogParts(opts.storeUrl, relayDir, onRecord) : fileLogParts(relayDir, onRecord);
  const tmp = `${opts.out}.partial-${process.pid}`;
  let fd: number | null = null;
  try {
    fd = fs.openSync(tmp, 'wx', 0o600);
    const tar = new TarWriter(fd);
    const listed: ManifestFile[] = [];
    const add = async (part: Part): Promise<void> => {
      try {
        const sha256 = await tar.add(HOME_PREFIX + part.rel, part.size, counted(part.chunks(), progress, opts.onProgress));
        listed.push({ path: part.rel, bytes: part.size, sha256 });
      } finally {
        part.close?.();
      }
    };
    const { files, links } = homeFiles(opts.home, { skip: opts.storeUrl ? new Set(['relay/personal-keys.json']) : undefined });
    progress.totalBytes = log.segments.reduce((n, s) => n + s.size, 0) + files.reduce((n, f) => n + f.size, 0);
    for (const seg of log.segments) await add(seg);
    const head = log.head;
    if (head.seq === 0) throw new BackupRefusedError('the event log holds no record yet: nothing to back up');
    for (const f of files) {
      const part = openHomeFile(f.rel, f.abs);
      if (part) await add(part);
    }
    const { keys, snapshot } = await log.after();
    if (keys) await add(keys);
    if (snapshot) await add(snapshot);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      relay_version: relayVersion(),
      created_at: (opts.now?.() ?? new Date()).toISOString(),
      store: opts.storeUrl ? 'postgres' : 'file',
      head,
      snapshot_seq: snapshot?.seq ?? null,
      files: listed,
    };
    const text = Buffer.from(JSON.stringify(manifest, null, 1) + '\n', 'utf8');
    await tar.add(MANIFEST_NAME, text.length, [text]);
    tar.finish();
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = null;
    fs.renameSync(tmp, opts.out);
    syncDir(path.dirname(opts.out));
    return {
      out: opts.out,
      store: manifest.store,
      head,
      snapshotSeq: manifest.snapshot_seq,
      files: listed.length,
      bytes: tar.bytes,
      records: progress.records,
      links,
    };
  } catch (err) {
    if (fd !== null) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  } finally {
    await log.close();
  }
}

/** A home file, opened now and read up to the size it has now (a recording being written keeps growing). */
function openHomeFile(rel: string, abs: string): Part | null {
  let fd: number;
  try {
    fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return null; // removed (or swapped for a link) since it was listed
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    fs.closeSync(fd);
    return null;
  }
  return { rel, size: st.size, chunks: () => fdChunks(fd, st.size), close: () => fs.closeSync(fd) };
}

async function* counted(
  chunks: Iterable<Buffer> | AsyncIterable<Buffer>,
  progress: BackupProgress,
  onProgress?: (p: BackupProgress) => void,
): AsyncIterable<Buffer> {
  for await (const chunk of chunks) {
    progress.bytes += chunk.length;
    progress.totalBytes = Math.max(progress.totalBytes, progress.bytes);
    onProgress?.(progress);
    yield chunk;
  }
}

export function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
