import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROFILE_NAME_RE } from '../voice/voice-config';

/** The agent's `hermes profile use <name>` marker: a canonical profile id (the agent's own rule). */
const ACTIVE_PROFILE_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Profile stores looked at, at most (the profile catalog's cap). */
export const MAX_PROFILE_STORES = 200;

/** One session store of the agent: the root's (`default`) or a named profile's. */
export type StoreFile = { profile: string; file: string };

/**
 * Where the agent keeps its session stores: `<home>/state.db` for the root profile and
 * `<home>/profiles/<name>/state.db` for each named one, `<home>` being the directory of the root store
 * (RELAY_AGENT_STATE_DB, else `state.db` beside the service config). Names are checked before they touch
 * a path; nothing here opens a database.
 */
export class AgentHome {
  readonly home: string;

  constructor(readonly rootDb: string) {
    this.home = path.dirname(rootDb);
  }

  /** A named profile's store; null when the name is not a profile directory here (the route's 404). */
  profileStore(name: string): StoreFile | null {
    if (name === 'default') return { profile: 'default', file: this.rootDb };
    if (!PROFILE_NAME_RE.test(name)) return null;
    const dir = path.join(this.home, 'profiles', name);
    return isDir(dir) ? { profile: name, file: path.join(dir, 'state.db') } : null;
  }

  /**
   * The store a bare agent run uses: the profile named by the root's `active_profile` marker when it names
   * a profile directory with a `config.yaml`; the root's otherwise. A marker that cannot be read, is not a
   * canonical id or names no usable profile fails closed to the root (as the reference relay does).
   */
  effectiveDefault(): StoreFile {
    const name = readMarker(path.join(this.home, 'active_profile'));
    if (name === null || name === 'default' || !ACTIVE_PROFILE_RE.test(name)) return { profile: 'default', file: this.rootDb };
    const dir = path.join(this.home, 'profiles', name);
    if (!isDir(dir) || !isFile(path.join(dir, 'config.yaml'))) return { profile: 'default', file: this.rootDb };
    return { profile: name, file: path.join(dir, 'state.db') };
  }

  /** Every store to read, root first, then each profile directory by name (whether or not its store exists). */
  allStores(): StoreFile[] {
    const out: StoreFile[] = [{ profile: 'default', file: this.rootDb }];
    let names: string[] = [];
    try {
      names = fs
        .readdirSync(path.join(this.home, 'profiles'), { withFileTypes: true })
        .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && PROFILE_NAME_RE.test(e.name) && e.name !== 'default')
        .map((e) => e.name)
        .sort();
    } catch {
      names = [];
    }
    for (const n of names.slice(0, MAX_PROFILE_STORES)) out.push({ profile: n, file: path.join(this.home, 'profiles', n, 'state.db') });
    return out;
  }
}

/**
 * The marker's first line, or null. Opened without following a symlink and without blocking (a FIFO
 * named `active_profile` must not hang the relay), and read only while it is a regular file of at most 256 bytes.
 */
function readMarker(file: string): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > 256) return null;
    const buf = Buffer.alloc(256);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8').trim();
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
