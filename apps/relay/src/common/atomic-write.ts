import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Replaces `file` with `text` so that a reader sees the old file or the new one, never half of either:
 * a temp file in the same directory (0600), fsync, rename over the target, fsync of the directory.
 * Returns the SHA-256 of what was written (what events record instead of the text). `keep` gives the
 * new file a mode (and owner) other than the temp file's 0600.
 */
export function atomicWrite(file: string, text: string, keep: { mode?: number; uid?: number; gid?: number } = {}): { sha256: string; bytes: number } {
  const data = Buffer.from(text, 'utf8');
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    // `keep`: the replaced file's mode and owner (an operator's 0644 config stays 0644); the owner only
    // where the relay may set it.
    if (keep.uid !== undefined && keep.gid !== undefined && (keep.uid !== process.getuid?.() || keep.gid !== process.getgid?.()))
      try {
        fs.fchownSync(fd, keep.uid, keep.gid);
      } catch {
        /* not ours to give away: the relay's user keeps it */
      }
    if (keep.mode !== undefined) fs.fchmodSync(fd, keep.mode);
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
  return { sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length };
}

/** A strong ETag for a file's current bytes (`"sha256:<first 32 hex>"`), or null when it does not exist. */
export function fileEtag(file: string): string | null {
  try {
    return `"sha256:${createHash('sha256').update(fs.readFileSync(file)).digest('hex').slice(0, 32)}"`;
  } catch {
    return null;
  }
}
