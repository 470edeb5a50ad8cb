import { acquireLogLock, scanLog, type HeldLock } from '@svc/events';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOME_PREFIX, MANIFEST_NAME, ManifestError, MAX_MANIFEST_BYTES, parseManifest, type BackupManifest } from './backup-manifest';
import { syncDir } from './home-backup';
import { skippedName } from './home-files';
import { restoreIntoPostgres } from './pg-restore';
import { fdChunks, listTar, TarError, type TarEntry } from './ustar';

export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

export type RestoreProgress = { bytes: number; totalBytes: number };

export type RestoreReport = {
  home: string;
  head: BackupManifest['head'];
  snapshotSeq: number | null;
  files: number;
  bytes: number;
  relayVersion: string;
  /** Where the log went: the home's file log, or the database (its URL without the password). */
  log: string;
  /** With --force: where the home's previous relay files were moved. */
  setAside: string | null;
};

/**
 * Lays a backup out as a relay home. The archive is hostile until proven: its headers are read and checked
 * first (names, types, sizes within the file), its manifest must list exactly what it holds, and every file
 * is extracted into a new folder beside the home and hashed against the manifest; then the log's chain is
 * proven to end at the manifest's head. Only then does anything move into the home (renames: a restore
 * that fails leaves the home as it was).
 */
export async function restoreHome(opts: {
  archive: string;
  home: string;
  toUrl?: string;
  force: boolean;
  onProgress?: (p: RestoreProgress) => void;
}): Promise<RestoreReport> {
  const home = path.resolve(opts.home);
  const existing = homeEntries(home);
  if (existing.length > 0 && !opts.force) {
    throw new RestoreRefusedError(
      `${home} is not empty (it holds ${existing.slice(0, 3).join(', ')}${existing.length > 3 ? ', ...' : ''}): restore into an empty or new folder, or give --force to set the relay's files there aside`,
    );
  }
  // A relay running on the home would go on writing the log this replaces.
  let lock: HeldLock | null = existing.includes('relay') ? acquireLogLock(path.join(home, 'relay'), 'relay home') : null;
  const fd = openArchive(opts.archive);
  let tmp: string | null = null;
  try {
    const { manifest, entries } = readManifest(fd);
    const totalBytes = entries.reduce((n, e) => n + e.size, 0);
    checkFreeSpace(path.dirname(home), totalBytes);
    fs.mkdirSync(path.dirname(home), { recursive: true, mode: 0o700 });
    tmp = fs.mkdtempSync(path.join(path.dirname(home), `.${path.basename(home)}.restore-`));
    extract(fd, entries, manifest, tmp, totalBytes, opts.onProgress);
    proveLog(path.join(tmp, 'relay', 'events'), manifest);
    const log = opts.toUrl ? await restoreIntoPostgres(tmp, opts.toUrl, manifest) : path.join(home, 'relay', 'events');
    lock?.release();
    lock = null;
    const setAside = layOut(tmp, home, existing.length > 0);
    tmp = null;
    return {
      home,
      head: manifest.head,
      snapshotSeq: manifest.snapshot_seq,
      files: manifest.files.length,
      bytes: totalBytes,
      relayVersion: manifest.relay_version,
      log,
      setAside,
    };
  } finally {
    fs.closeSync(fd);
    lock?.release();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** What a home holds (nothing when it does not exist); a file where the home should be is refused. */
function homeEntries(home: string): string[] {
  try {
    return fs.readdirSync(home).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    if (code === 'ENOTDIR') throw new RestoreRefusedError(`${home} is a file, not a folder`);
    throw err;
  }
}

function openArchive(file: string): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw new RestoreRefusedError(`${file}: no such file`);
  }
  if (!st.isFile()) throw new RestoreRefusedError(`${file} is not a file`);
  return fs.openSync(file, 'r');
}

/** The archive's entries and its manifest, checked against each other before a byte is extracted. */
function readManifest(fd: number): { manifest: BackupManifest; entries: TarEntry[] } {
  const all = listTar(fd);
  const last = all[all.length - 1];
  if (!last || last.name !== MANIFEST_NAME) throw new ManifestError(`the archive's last entry is not ${MANIFEST_NAME}: it is not a whole backup`);
  if (last.size > MAX_MANIFEST_BYTES) throw new ManifestError(`the manifest is ${last.size} bytes, more than a manifest can be`);
  const buf = Buffer.alloc(last.size);
  fs.readSync(fd, buf, 0, last.size, last.offset);
  const manifest = parseManifest(buf.toString('utf8'));
  const entries = all.slice(0, -1);
  const listed = new Map(manifest.files.map((f) => [HOME_PREFIX + f.path, f]));
  if (listed.size !== manifest.files.length) throw new ManifestError('the manifest lists a file twice');
  for (const e of entries) {
    // A lock in a restored home would stop the relay there (a lock from another host is never taken over).
    if (skippedName(path.posix.basename(e.name))) throw new ManifestError(`${e.name}: a backup never holds a lock or a temporary file`);
    const f = listed.get(e.name);
    if (!f) throw new ManifestError(`${e.name} is in the archive but not in its manifest`);
    if (f.bytes !== e.size) throw new ManifestError(`${e.name}: the archive holds ${e.size} bytes, the manifest ${f.bytes}`);
  }
  if (entries.length !== listed.size) {
    const missing = [...listed.keys()].filter((n) => !entries.some((e) => e.name === n));
    throw new ManifestError(`the manifest lists ${missing[0]}, which the archive does not hold`);
  }
  return { manifest, entries };
}

function checkFreeSpace(dir: string, bytes: number): void {
  let probe = dir;
  while (!fs.existsSync(probe) && path.dirname(probe) !== probe) probe = path.dirname(probe);
  const st = fs.statfsSync(probe);
  const free = st.bavail * st.bsize;
  if (free < bytes + 16 * 1024 * 1024) {
    throw new RestoreRefusedError(`the backup needs ${mib(bytes)} MiB and ${probe} has ${mib(free)} MiB free`);
  }
}

const mib = (n: number): string => (n / 1024 / 1024).toFixed(1);

/** Every entry into `tmp` (files 0600, folders 0700: never the archive's modes), each hashed against the manifest. */
function extract(
  fd: number,
  entries: TarEntry[],
  manifest: BackupManifest,
  tmp: string,
  totalBytes: number,
  onProgress?: (p: RestoreProgress) => void,
): void {
  const sums = new Map(manifest.files.map((f) => [HOME_PREFIX + f.path, f.sha256]));
  const progress: RestoreProgress = { bytes: 0, totalBytes };
  for (const e of entries) {
    const rel = e.name.slice(HOME_PREFIX.length);
    const target = path.join(tmp, ...rel.split('/'));
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    const out = fs.openSync(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    const hash = createHash('sha256');
    let written = 0;
    try {
      for (const chunk of fdChunks(fd, e.size, e.offset)) {
        hash.update(chunk);
        for (let off = 0; off < chunk.length;) off += fs.writeSync(out, chunk, off);
        written += chunk.length;
        progress.bytes += chunk.length;
        onProgress?.(progress);
      }
      fs.fsyncSync(out);
    } finally {
      fs.closeSync(out);
    }
    if (written !== e.size) throw new TarError(`the archive is cut short inside ${e.name}`);
    if (hash.digest('hex') !== sums.get(e.name)) {
      throw new ManifestError(`${e.name}: its bytes are not the ones the manifest records (sha256 differs): the archive was changed or damaged`);
    }
  }
}

/** The log laid out must be a whole chain that ends exactly at the manifest's head. */
function proveLog(dir: string, manifest: BackupManifest): void {
  const r = scanLog(dir, { fromSeq: 1 });
  if (r.torn) throw new ManifestError(`the log's last segment ends inside a record (${r.torn.segment}): a backup never holds half a record`);
  if (r.lastSeq !== manifest.head.seq || r.lastHash !== manifest.head.hash) {
    throw new ManifestError(`the log ends at seq ${r.lastSeq}, the manifest says seq ${manifest.head.seq}: the archive was changed`);
  }
}

/**
 * Moves the laid-out home into place: one rename when the home is new or empty; with --force, each of the
 * backup's top-level parts in turn, the home's own parts moved first into a folder named after the time.
 */
function layOut(tmp: string, home: string, nonEmpty: boolean): string | null {
  if (!nonEmpty) {
    if (fs.existsSync(home)) fs.rmdirSync(home);
    fs.renameSync(tmp, home);
    fs.chmodSync(home, 0o700);
    syncDir(path.dirname(home));
    return null;
  }
  const aside = path.join(home, `.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  fs.mkdirSync(aside, { mode: 0o700 });
  for (const name of fs.readdirSync(tmp)) {
    if (fs.existsSync(path.join(home, name))) fs.renameSync(path.join(home, name), path.join(aside, name));
    fs.renameSync(path.join(tmp, name), path.join(home, name));
  }
  fs.rmdirSync(tmp);
  syncDir(home);
  return aside;
}
