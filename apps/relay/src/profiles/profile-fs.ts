import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Reading a profile's files without ever following a symbolic link (issue: a symlinked `memories/` or
 * `skills/` was read and written through, and a check with `lstat` before an `open` that follows links
 * raced: a file swapped for a link between the two leaked the link's target). Every directory below the
 * profile's home is `lstat`ed as a real directory; the file itself is opened with O_NOFOLLOW (a link
 * there fails to open) and O_NONBLOCK (a FIFO swapped in does not hang the open); the opened descriptor
 * must be a regular file, the same one (device and inode) the `lstat` saw, and (where /proc shows it)
 * really under the profile's home; and the directories are looked at again after the open, so one
 * swapped for a link meanwhile is caught.
 */

/** `ok`; `absent` (no such file, or not a regular file); `link` (a link on the way, or the file changed under the read). */
export type InsideState = 'ok' | 'absent' | 'link';

const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

const same = (a: fs.Stats, b: fs.Stats) => a.dev === b.dev && a.ino === b.ino;

/** What `segments` under `root` is: a real directory (`dir`), a link on the way (`link`), or nothing usable (`absent`). */
export function dirInside(root: string, segments: string[]): 'dir' | 'link' | 'absent' {
  let p = root;
  for (const seg of segments) {
    p = path.join(p, seg);
    const st = lstatOrNull(p);
    if (!st) return 'absent';
    if (st.isSymbolicLink()) return 'link';
    if (!st.isDirectory()) return 'absent';
  }
  return 'dir';
}

/** The descriptor of `segments` under `root`, opened as described above, or why not. The caller closes it. */
export function openInside(root: string, segments: string[]): { state: 'ok'; fd: number; stat: fs.Stats } | { state: 'absent' | 'link' } {
  const dirs: Array<{ p: string; st: fs.Stats }> = [];
  let p = root;
  for (const seg of segments.slice(0, -1)) {
    p = path.join(p, seg);
    const st = lstatOrNull(p);
    if (!st) return { state: 'absent' };
    if (st.isSymbolicLink()) return { state: 'link' };
    if (!st.isDirectory()) return { state: 'absent' };
    dirs.push({ p, st });
  }
  const file = path.join(p, segments[segments.length - 1]);
  const before = lstatOrNull(file);
  if (!before) return { state: 'absent' };
  if (before.isSymbolicLink()) return { state: 'link' };
  if (!before.isFile()) return { state: 'absent' };
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { state: code === 'ELOOP' || code === 'EMLINK' ? 'link' : 'absent' };
  }
  try {
    const stat = fs.fstatSync(fd);
    const stillDirs = dirs.every((d) => {
      const now = lstatOrNull(d.p);
      return now !== null && !now.isSymbolicLink() && now.isDirectory() && same(now, d.st);
    });
    if (!stat.isFile() || !same(stat, before) || !stillDirs || !openedUnder(fd, root)) {
      fs.closeSync(fd);
      return { state: 'link' };
    }
    return { state: 'ok', fd, stat };
  } catch {
    fs.closeSync(fd);
    return { state: 'absent' };
  }
}

/** Where /proc shows what a descriptor opened: its real path must be under the root's real path. */
function openedUnder(fd: number, root: string): boolean {
  let real: string;
  try {
    real = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return true; // no /proc (not Linux): the dev/ino and directory checks stand alone
  }
  let base: string;
  try {
    base = fs.realpathSync(root);
  } catch {
    return false;
  }
  return real.startsWith(base.endsWith(path.sep) ? base : base + path.sep);
}

export type InsideRead =
  | { state: 'ok'; text: string; bytes: Buffer; size: number; truncated: boolean; etag: string | null }
  | { state: 'absent' | 'link' }
  | { state: 'too_large'; size: number };

/** Files past this get an ETag from their identity and size rather than a digest of every byte. */
const MAX_DIGESTED_BYTES = 8 * 1024 * 1024;

/**
 * A profile file's first `max` bytes (as text and bytes), read through openInside. `whole`: a file past
 * `max` is `too_large` (nothing read) rather than cut. `etag`: also the file's ETag (`"sha256:<32 hex>"`
 * of all its bytes, read in 64 KiB pieces; past 8 MiB one made of its identity, size and mtime).
 */
export function readInside(root: string, segments: string[], max: number, opts: { whole?: boolean; etag?: boolean } = {}): InsideRead {
  const opened = openInside(root, segments);
  if (opened.state !== 'ok') return opened;
  const { fd, stat } = opened;
  try {
    if (opts.whole && stat.size > max) return { state: 'too_large', size: stat.size };
    const buf = Buffer.alloc(Math.min(stat.size, max));
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = fs.readSync(fd, buf, n, buf.length - n, n);
    const bytes = buf.subarray(0, n);
    let etag: string | null = null;
    if (opts.etag)
      etag =
        stat.size > MAX_DIGESTED_BYTES
          ? `"stat:${stat.ino.toString(16)}-${stat.size.toString(16)}-${Math.trunc(stat.mtimeMs).toString(16)}"`
          : etagOf(fd, stat.size <= n ? bytes : null);
    const truncated = stat.size > max;
    return { state: 'ok', text: (truncated ? wholeCharacters(bytes) : bytes).toString('utf8'), bytes, size: stat.size, truncated, etag };
  } finally {
    fs.closeSync(fd);
  }
}

/** A cut at `max` may split a UTF-8 character: the text ends before it rather than with a U+FFFD. */
function wholeCharacters(bytes: Buffer): Buffer {
  let lead = bytes.length - 1;
  while (lead >= 0 && lead > bytes.length - 4 && (bytes[lead] & 0xc0) === 0x80) lead--;
  if (lead < 0) return bytes;
  const b = bytes[lead];
  const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + need > bytes.length ? bytes.subarray(0, lead) : bytes;
}

/** The ETag of a file's bytes: `"sha256:<first 32 hex>"` (common/atomic-write.ts fileEtag's form). */
export function etagOfBytes(sha256hex: string): string {
  return `"sha256:${sha256hex.slice(0, 32)}"`;
}

function etagOf(fd: number, whole: Buffer | null): string {
  const h = createHash('sha256');
  if (whole) h.update(whole);
  else {
    const chunk = Buffer.alloc(64 * 1024);
    for (let pos = 0, got = -1; got !== 0 && pos <= MAX_DIGESTED_BYTES; pos += got) {
      got = fs.readSync(fd, chunk, 0, chunk.length, pos);
      h.update(chunk.subarray(0, got));
    }
  }
  return etagOfBytes(h.digest('hex'));
}
