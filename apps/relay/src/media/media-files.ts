import { checkMediaPath, DomainError, tooLarge, type MediaPolicyContext } from '@svc/domain';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** An opened, checked file: what was opened is what gets served. */
export type OpenedFile = { handle: fs.promises.FileHandle; stat: fs.BigIntStats; realPath: string; fileId: string };

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/**
 * A file's identity: device, inode and (where the filesystem records it) birth time, since a freed
 * inode number is soon reused by the next file created.
 */
export function fileIdOf(stat: fs.BigIntStats): string {
  return stat.birthtimeNs > 0n ? `${stat.dev}:${stat.ino}:${stat.birthtimeNs}` : `${stat.dev}:${stat.ino}`;
}

/** Resolves every symlink and `..`; missing files are 404, unreadable ones 403. */
export async function realPathOf(p: string): Promise<string> {
  try {
    return await fs.promises.realpath(p);
  } catch (err) {
    throw fsError(err);
  }
}

export function fsError(err: unknown): DomainError {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new DomainError('media.file_missing', 'not_found', 'no file at that path');
    case 'EACCES':
    case 'EPERM':
      return new DomainError('media.unreadable', 'forbidden', 'the relay may not read that file');
    case 'ELOOP':
      return new DomainError('media.symlink_refused', 'forbidden', 'the file is a symlink or a symlink loop; give the real path');
    case 'ENAMETOOLONG':
      return new DomainError('media.bad_path', 'invalid', 'path: too long');
    case 'EISDIR':
      return new DomainError('media.not_regular', 'forbidden', 'not a regular file (a directory)');
    default:
      return new DomainError('media.unreadable', 'forbidden', `the file cannot be opened (${code ?? 'error'})`);
  }
}

/** The path of an open descriptor, as the kernel sees it (Linux); null where /proc is not there. */
async function descriptorPath(handle: fs.promises.FileHandle): Promise<string | null> {
  if (os.platform() !== 'linux') return null;
  try {
    return await fs.promises.readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return null;
  }
}

export type OpenChecks = {
  maxSize: number;
  /** Media policy re-applied to the opened descriptor's own path (by-path, register). */
  policy?: MediaPolicyContext;
  /** Registered identity (`dev:ino`) and real path: anything else opened is refused. */
  expect?: { fileId: string; realPath: string };
};

/**
 * Opens `realPath` without following a final symlink and without blocking on a FIFO, then checks the
 * opened descriptor itself (fstat, and its /proc path), so a swap between check and open cannot
 * escape: regular file, size cap, same identity as registered, policy on what was really opened.
 * The caller owns the returned handle.
 */
export async function openChecked(realPath: string, checks: OpenChecks): Promise<OpenedFile> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(realPath, OPEN_FLAGS);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP' && checks.expect) throw pathChanged();
    throw fsError(err);
  }
  try {
    const stat = await handle.stat({ bigint: true });
    if (!stat.isFile()) throw new DomainError('media.not_regular', 'forbidden', `not a regular file (${kindOf(stat)})`);
    const fileId = fileIdOf(stat);
    if (checks.expect && fileId !== checks.expect.fileId) throw pathChanged();
    const opened = await descriptorPath(handle);
    if (opened !== null) {
      if (checks.expect && opened !== checks.expect.realPath) throw pathChanged();
      if (checks.policy) {
        const verdict = checkMediaPath(opened, checks.policy);
        if (!verdict.ok) throw new DomainError(verdict.code, verdict.code === 'media.bad_path' ? 'invalid' : 'forbidden', verdict.reason);
      }
    }
    if (stat.size > BigInt(checks.maxSize)) throw tooLarge(Number(stat.size), checks.maxSize);
    return { handle, stat, realPath: opened ?? realPath, fileId };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

function pathChanged(): DomainError {
  return new DomainError('media.file_changed', 'forbidden', 'the registered file was replaced or its path now leads elsewhere; register it again');
}

function kindOf(s: fs.BigIntStats): string {
  if (s.isDirectory()) return 'a directory';
  if (s.isFIFO()) return 'a FIFO';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  if (s.isSymbolicLink()) return 'a symlink';
  return 'not a file';
}

/** The policy's roots as real paths (a root that does not exist yet is taken as written). */
export function policyContext(input: MediaPolicyContext): MediaPolicyContext {
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return {
    home: real(input.home),
    svcHome: real(input.svcHome),
    workspace: real(input.workspace),
    tmpDir: real(input.tmpDir),
    allowedRoots: input.allowedRoots.map(real),
    strictSandbox: input.strictSandbox,
  };
}
