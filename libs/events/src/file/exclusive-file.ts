import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';

/** Hard links are not available on every filesystem (some network and FUSE mounts). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Creates `file` (mode 0600) holding `content`, unless it exists: returns false then, and leaves it alone.
 * The content is written beside the file and hard-linked into place, so no reader ever finds the file
 * empty or half-written. Where the filesystem has no hard links, the file is created in place with
 * O_EXCL (still exclusive; the content follows within microseconds).
 */
export function createFileExclusive(file: string, content: string): boolean {
  const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  fs.writeFileSync(aside, content, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(aside, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_LINKS.has(code)) throw err;
  } finally {
    fs.rmSync(aside, { force: true });
  }
  try {
    fs.writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Replaces `file` with `content` in one step (written beside it, then renamed over it). */
export function replaceFile(file: string, content: string): void {
  const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  fs.writeFileSync(aside, content, { mode: 0o600, flag: 'wx' });
  try {
    fs.renameSync(aside, file);
  } finally {
    fs.rmSync(aside, { force: true });
  }
}
