import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFileExclusive, replaceFile } from './exclusive-file';
import { MAX_FILE_JSON_DEPTH, parseJsonBounded } from '../json-limits';

/** The lock file of a log directory: one writer at a time, for the writer's whole life. */
export const LOCK_FILE = 'LOCK';

/** Who holds a log's lock (what the lock file says). */
export type LockHolder = {
  pid: number;
  /** The holder's start time in clock ticks since boot (`/proc/<pid>/stat`), so a reused pid is not taken for it. */
  procStart: string | null;
  hostname: string;
  /** When the lock was taken (ISO 8601, wall time like the pid: it only informs a person). */
  since: string;
  /** The locked directory (`dev:ino`): on this host, a lock copied along with the log (a backup) does not lock the copy. */
  dirId: string;
  token: string;
  /**
   * Where the holder answers, once it listens (a relay home's lock): its own URL on this host, and the TLS
   * certificate it serves, so the CLI finds the relay of the home it is pointed at on any port.
   */
  url?: string;
  certFile?: string;
};

/** What a holder adds to its lock once it knows it (`HeldLock.annotate`). */
export type LockNote = { url: string; certFile?: string };

/** Thrown when another live process (or one on another host) writes this log. */
export class LogLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
    /** What the directory is to a person: `event log` (the log's own lock) or `relay home` (the home's). */
    readonly what: string = 'event log',
  ) {
    const where = holder.hostname === os.hostname() ? `pid ${holder.pid}` : `pid ${holder.pid} on host ${holder.hostname}`;
    super(`the ${what} ${dir} is in use by another relay (${where}, since ${holder.since})`);
    this.name = 'LogLockedError';
  }
}

/** A held lock: how to give it back, and the dead holder whose lock was taken over, if any. */
export type HeldLock = { release: () => void; annotate: (note: LockNote) => void; tookOver: StaleLock | null };
/** A lock left by a relay on this host that did not stop (what `relay.started` records); nulls: the file was unreadable. */
export type StaleLock = { pid: number | null; since: string | null };

/**
 * Takes the lock of a log directory, or throws LogLockedError naming the live holder. Two relays that
 * share a log would each number their own records and fork the chain, so the second one must not write
 * a byte (not even the cut of a torn tail). A lock left by a process that died (SIGKILL, power loss) is
 * taken over (and named in the result, so the run can record it). The lock file appears with its content
 * in one step (`createFileExclusive`), so a reader never finds it empty.
 *
 * Known limit: two processes that find the same dead holder's lock at the same instant can both take
 * it over (the later rename wins the file; each checks it after its rename, which narrows the window to
 * microseconds).
 */
export function acquireLogLock(dir: string, what = 'event log'): HeldLock {
  const lockPath = path.join(dir, LOCK_FILE);
  const mine: LockHolder = {
    pid: process.pid,
    procStart: procStart(process.pid),
    hostname: os.hostname(),
    since: new Date().toISOString(),
    dirId: dirId(dir),
    token: randomUUID(),
  };
  const content = JSON.stringify(mine) + '\n';
  const held = (tookOver: StaleLock | null): HeldLock => ({
    release: () => release(lockPath, mine.token),
    // Only while the file is still ours; replaced in one step, so a reader sees the lock with or without the note.
    annotate: (note) => {
      const now = readHolder(lockPath);
      if (now !== 'gone' && now !== 'unreadable' && now.token === mine.token) replaceFile(lockPath, JSON.stringify({ ...mine, ...note }) + '\n');
    },
    tookOver,
  });
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createFileExclusive(lockPath, content)) return held(null);
    const holder = readHolder(lockPath);
    if (holder === 'gone') continue; // released between our attempt and our read: try again
    if (holder !== 'unreadable' && (holder.hostname !== mine.hostname || (holder.dirId === mine.dirId && isAlive(holder)))) {
      throw new LogLockedError(dir, holder, what);
    }
    // A dead holder's lock (or one nobody can read): take it over, then check nobody else did as well.
    replaceFile(lockPath, content);
    const after = readHolder(lockPath);
    if (after !== 'gone' && after !== 'unreadable' && after.token === mine.token) {
      return held(holder === 'unreadable' ? { pid: null, since: null } : { pid: holder.pid, since: holder.since });
    }
  }
  const holder = readHolder(lockPath);
  if (holder !== 'gone' && holder !== 'unreadable') throw new LogLockedError(dir, holder, what);
  throw new Error(`could not take the lock of the ${what} ${dir}`);
}

/** The holder of `dir`'s lock when it is a live process on this host (what the CLI dials), else null. */
export function liveLockHolder(dir: string): LockHolder | null {
  const h = readLogLock(dir);
  return h !== null && h.hostname === os.hostname() && isAlive(h) ? h : null;
}

/** What the lock file of `dir` says, if anything (for messages and tests). */
export function readLogLock(dir: string): LockHolder | null {
  const h = readHolder(path.join(dir, LOCK_FILE));
  return h === 'gone' || h === 'unreadable' ? null : h;
}

function release(lockPath: string, token: string): void {
  const holder = readHolder(lockPath);
  // Only our own lock: after a takeover race the file may name someone else.
  if (holder !== 'gone' && holder !== 'unreadable' && holder.token === token) fs.rmSync(lockPath, { force: true });
}

function readHolder(lockPath: string): LockHolder | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = fs.readFileSync(lockPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    return 'unreadable';
  }
  try {
    const h = parseJsonBounded(text, MAX_FILE_JSON_DEPTH) as Partial<LockHolder>;
    if (typeof h.pid !== 'number' || typeof h.token !== 'string' || typeof h.hostname !== 'string' || typeof h.dirId !== 'string')
      return 'unreadable';
    return {
      pid: h.pid,
      procStart: typeof h.procStart === 'string' ? h.procStart : null,
      hostname: h.hostname,
      since: String(h.since),
      dirId: h.dirId,
      token: h.token,
      ...(typeof h.url === 'string' && /^https?:\/\/[^\s]{1,200}$/.test(h.url) ? { url: h.url } : {}),
      ...(typeof h.certFile === 'string' && h.certFile.length < 4096 ? { certFile: h.certFile } : {}),
    };
  } catch {
    return 'unreadable';
  }
}

/**
 * Whether a holder on this host still runs. (A lock from another host always counts: its process cannot be
 * seen from here, and a shared filesystem may show the same directory under another dev:ino, so only a
 * person may remove it.)
 */
function isAlive(h: LockHolder): boolean {
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it runs, as another user.
  }
  const start = procStart(h.pid);
  return start === null || h.procStart === null || start === h.procStart;
}

function dirId(dir: string): string {
  const st = fs.statSync(dir, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

/** Field 22 of `/proc/<pid>/stat` (start time after boot), or null where there is no /proc. */
function procStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}
