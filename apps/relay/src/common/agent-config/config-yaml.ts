import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../atomic-write';
import { ConfigFileError, MAX_CONFIG_BYTES, parseConfigYaml, type ConfigProblem, type YamlMap } from './config-yaml-parse';

type Cached = { version: string; bytes: number; data: YamlMap | null; error: ConfigFileError | null };
/** Parsed configs by path, each with the file's identity (device, inode, size, times) it was read at. */
const cache = new Map<string, Cached>();
let cachedBytes = 0;
const CACHE_MAX_FILES = 512;
const CACHE_MAX_BYTES = 16 * 1024 * 1024;
const EMPTY: YamlMap = Object.freeze({});

export type ConfigRejection = { file: string; problem: ConfigProblem; reason: string };
const rejectionListeners = new Set<(r: ConfigRejection) => void>();

/**
 * Called once for each version of a config file the relay refuses (at start-up, on a rescan or on a
 * request, whichever reads it first): the operator's log names the file there. Returns the unsubscribe.
 */
export function onConfigRejected(listener: (r: ConfigRejection) => void): () => void {
  rejectionListeners.add(listener);
  return () => rejectionListeners.delete(listener);
}

const versionOf = (st: fs.Stats) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/**
 * A config's YAML mapping, parsed once per version of the file (a request or a rescan of an unchanged
 * file costs one `stat`). The value is frozen and shared: copy before changing it. A missing, unreadable,
 * oversized or invalid file reads as `{}`; with `strict` (a write, or a caller that must tell the
 * difference) it throws ConfigFileError instead.
 */
export function readYamlMap(file: string, strict = false): YamlMap {
  const name = path.basename(file);
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if (strict) throw new ConfigFileError('unreadable', `${name} could not be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    return EMPTY;
  }
  let entry = cache.get(file);
  if (!entry || entry.version !== versionOf(st)) {
    entry = load(file, name, st);
    remember(file, entry);
    if (entry.error) for (const l of rejectionListeners) l({ file, problem: entry.error.problem, reason: entry.error.message });
  } else {
    cache.delete(file); // most recently used last
    cache.set(file, entry);
  }
  if (entry.error) {
    if (strict) throw entry.error;
    return EMPTY;
  }
  return entry.data!;
}

function load(file: string, name: string, st: fs.Stats): Cached {
  if (!st.isFile())
    return { version: versionOf(st), bytes: 0, data: null, error: new ConfigFileError('unreadable', `${name} is not a regular file`) };
  if (st.size > MAX_CONFIG_BYTES)
    return {
      version: versionOf(st),
      bytes: 0,
      data: null,
      error: new ConfigFileError('too_large', `${name} is ${st.size} bytes; the relay reads at most ${MAX_CONFIG_BYTES}`),
    };
  let read: { text: string; stat: fs.Stats };
  try {
    read = readConfigText(file);
  } catch (err) {
    return { version: versionOf(st), bytes: 0, data: null, error: err as ConfigFileError };
  }
  try {
    const { data } = parseConfigYaml(read.text, name);
    return { version: versionOf(read.stat), bytes: read.text.length, data: deepFreeze(data), error: null };
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err;
    return { version: versionOf(read.stat), bytes: 0, data: null, error: err };
  }
}

function remember(file: string, entry: Cached): void {
  const old = cache.get(file);
  if (old) {
    cachedBytes -= old.bytes;
    cache.delete(file);
  }
  cache.set(file, entry);
  cachedBytes += entry.bytes;
  for (const [k, v] of cache) {
    if (cache.size <= CACHE_MAX_FILES && cachedBytes <= CACHE_MAX_BYTES) break;
    if (k === file) continue;
    cache.delete(k);
    cachedBytes -= v.bytes;
  }
}

/**
 * A config's text, at most MAX_CONFIG_BYTES (the size is checked on the open descriptor, and no more than
 * the cap plus one byte is read, so a file that grows meanwhile is refused, not read whole). The stat is
 * the descriptor's: the version of the file this text is.
 */
export function readConfigText(file: string): { text: string; stat: fs.Stats } {
  const name = path.basename(file);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw new ConfigFileError('unreadable', `${name} could not be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new ConfigFileError('unreadable', `${name} is not a regular file`);
    if (stat.size > MAX_CONFIG_BYTES)
      throw new ConfigFileError('too_large', `${name} is ${stat.size} bytes; the relay reads at most ${MAX_CONFIG_BYTES}`);
    const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = fs.readSync(fd, buf, n, buf.length - n, n);
    if (n > MAX_CONFIG_BYTES) throw new ConfigFileError('too_large', `${name} is larger than ${MAX_CONFIG_BYTES} bytes`);
    return { text: buf.subarray(0, n).toString('utf8'), stat };
  } catch (err) {
    if (err instanceof ConfigFileError) throw err;
    throw new ConfigFileError('unreadable', `${name} could not be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  } finally {
    fs.closeSync(fd);
  }
}

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const x of Object.values(v)) stack.push(x);
  }
  return value;
}

export type RewriteResult = { path: string; sha256: string; bytes: number; changed: boolean; backup: string | null };

/**
 * Rewrites a config with `edit` (text in, text out) the way an operator would want: refused through a
 * symbolic link (the relay never writes where a link points), the previous text kept as `<file>.bak`
 * (0600), the new one written atomically with the file's own mode (and owner, when the relay may set it),
 * and refused when the file changed while it was being edited. An edit that changes nothing writes nothing.
 */
export function rewriteConfigInPlace(file: string, edit: (text: string) => string): RewriteResult {
  const name = path.basename(file);
  let link: fs.Stats;
  try {
    link = fs.lstatSync(file);
  } catch (err) {
    throw new ConfigFileError('unreadable', `${name} could not be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (link.isSymbolicLink())
    throw new ConfigFileError('invalid', `${name} is a symbolic link; the relay does not write through links, edit it by hand`);
  const { text, stat } = readConfigText(file);
  if (stat.ino !== link.ino || stat.dev !== link.dev)
    throw new ConfigFileError('invalid', `${name} changed while the relay was reading it; try again`);
  const next = edit(text);
  const sha = (t: string) => createHash('sha256').update(t).digest('hex');
  if (next === text) return { path: file, sha256: sha(text), bytes: Buffer.byteLength(text), changed: false, backup: null };
  const now = fs.lstatSync(file);
  if (versionOf(now) !== versionOf(stat)) throw new ConfigFileError('invalid', `${name} changed while the relay was editing it; try again`);
  const backup = `${file}.bak`;
  atomicWrite(backup, text);
  const written = atomicWrite(file, next, { mode: stat.mode & 0o777, uid: stat.uid, gid: stat.gid });
  return { path: file, sha256: written.sha256, bytes: written.bytes, changed: true, backup };
}
