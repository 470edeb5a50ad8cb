import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

/**
 * The backup's container: POSIX ustar, the subset a backup needs (regular files only, names of safe
 * characters, no links, no extended headers), so `tar tvf` lists one and the reader below is small enough
 * to trust with a hostile file. Why not a tar library: extracting is exactly where traversal bugs live, and
 * a restore never extracts through anything but this reader, which refuses every entry type but a file.
 */

const BLOCK = 512;
/** 11 octal digits: the most a ustar size field holds (8 GiB less a byte). */
const MAX_ENTRY_BYTES = 8 * 1024 ** 3 - 1;
const CHUNK = 1 << 20;
/** A name's parts: what the relay itself writes in a home (no spaces, quotes, backslashes or control bytes). */
const SAFE_PART = /^[A-Za-z0-9_.-]+$/;

export class TarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarError';
  }
}

/** Why an entry name is refused, or null: relative, `/`-separated safe parts, none `.` or `..`, at most 255 bytes. */
export function unsafeName(name: string): string | null {
  if (name.length === 0 || name.length > 255) return 'an empty or over-long name';
  if (name.startsWith('/')) return 'an absolute path';
  for (const part of name.split('/')) {
    if (part === '..' || part === '.') return 'a path that climbs out of the archive (..)';
    if (!SAFE_PART.test(part)) return 'a name with characters a backup never holds';
  }
  return null;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mtimeSec: number): Buffer {
  if (unsafeName(name)) throw new TarError(`cannot store ${name}: ${unsafeName(name)}`);
  if (size > MAX_ENTRY_BYTES) throw new TarError(`cannot store ${name}: ${size} bytes is more than one tar entry holds`);
  // ustar splits a long name at a slash into prefix (155) and name (100).
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || name.length - cut - 1 > 100) throw new TarError(`cannot store ${name}: the name is too long for ustar`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  const h = Buffer.alloc(BLOCK);
  h.write(base, 0, 100, 'ascii');
  h.write(octal(0o600, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.max(0, Math.floor(mtimeSec)), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0' + '00', 257, 'ascii');
  h.write(prefix, 345, 155, 'ascii');
  h.write(octal(checksum(h), 7) + ' ', 148, 'ascii');
  return h;
}

/** The header checksum: every byte summed, the checksum field counted as spaces. */
function checksum(h: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  return sum;
}

/** Writes entries to an open file descriptor; each entry's SHA-256 is computed as it is written. */
export class TarWriter {
  bytes = 0;

  constructor(private readonly fd: number) {}

  /** One entry of exactly `size` bytes from `chunks` (fewer or more is an error: the header is written first). */
  async add(name: string, size: number, chunks: Iterable<Buffer> | AsyncIterable<Buffer>, mtimeSec = Date.now() / 1000): Promise<string> {
    this.write(header(name, size, mtimeSec));
    const hash = createHash('sha256');
    let written = 0;
    for await (const chunk of chunks) {
      written += chunk.length;
      if (written > size) throw new TarError(`${name} grew past the ${size} bytes it was stored with`);
      hash.update(chunk);
      this.write(chunk);
    }
    if (written !== size) throw new TarError(`${name} ended after ${written} of its ${size} bytes`);
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad) this.write(Buffer.alloc(pad));
    return hash.digest('hex');
  }

  /** The end of the archive: two zero blocks. */
  finish(): void {
    this.write(Buffer.alloc(2 * BLOCK));
  }

  private write(buf: Buffer): void {
    for (let off = 0; off < buf.length;) off += fs.writeSync(this.fd, buf, off);
    this.bytes += buf.length;
  }
}

/** `size` bytes of an open file from `start`, a MiB at a time (a file that is shorter than that fails the entry). */
export function* fdChunks(fd: number, size: number, start = 0): Iterable<Buffer> {
  const buf = Buffer.allocUnsafe(CHUNK);
  for (let done = 0; done < size;) {
    const n = fs.readSync(fd, buf, 0, Math.min(CHUNK, size - done), start + done);
    if (n === 0) return;
    done += n;
    yield Buffer.from(buf.subarray(0, n));
  }
}

export type TarEntry = { name: string; size: number; offset: number };

/**
 * The entries of an archive file, from their headers alone (nothing is extracted): every header's checksum,
 * magic and type, every name (see unsafeName), no name twice, and every entry's bytes inside the file.
 * Throws TarError naming the entry.
 */
export function listTar(fd: number): TarEntry[] {
  const fileSize = fs.fstatSync(fd).size;
  const entries: TarEntry[] = [];
  const seen = new Set<string>();
  const h = Buffer.alloc(BLOCK);
  for (let pos = 0; ;) {
    if (pos + BLOCK > fileSize) throw new TarError(`the archive is cut short: it ends at byte ${fileSize} before its end marker`);
    fs.readSync(fd, h, 0, BLOCK, pos);
    if (h.every((b) => b === 0)) {
      if (pos + 2 * BLOCK > fileSize) throw new TarError(`the archive is cut short: it ends at byte ${fileSize} inside its end marker`);
      return entries;
    }
    const name = field(h, 345, 155) ? `${field(h, 345, 155)}/${field(h, 0, 100)}` : field(h, 0, 100);
    const what = `entry ${entries.length + 1} (${JSON.stringify(name.slice(0, 120))}, header at byte ${pos})`;
    if (parseOctal(h, 148, 8) !== checksum(h)) throw new TarError(`${what}: its header fails its checksum (the archive was changed or damaged)`);
    if (h.toString('latin1', 257, 263) !== 'ustar\0') throw new TarError(`${what}: not a ustar header`);
    const type = String.fromCharCode(h[156]);
    if (type !== '0' && type !== '\0') throw new TarError(`${what}: ${typeName(type)}; a backup holds only regular files`);
    const bad = unsafeName(name);
    if (bad) throw new TarError(`${what}: ${bad}`);
    if (seen.has(name)) throw new TarError(`${what}: the same name twice`);
    seen.add(name);
    const size = parseOctal(h, 124, 12);
    if (size === null) throw new TarError(`${what}: an unreadable size`);
    const end = pos + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (end > fileSize) throw new TarError(`the archive is cut short: ${what} claims ${size} bytes, ${Math.max(0, fileSize - pos - BLOCK)} remain`);
    entries.push({ name, size, offset: pos + BLOCK });
    pos = end;
  }
}

function field(h: Buffer, at: number, len: number): string {
  const raw = h.subarray(at, at + len);
  const nul = raw.indexOf(0);
  return raw.toString('latin1', 0, nul === -1 ? len : nul);
}

/** An octal field (digits, then NUL or space padding), or null when it holds anything else. */
function parseOctal(h: Buffer, at: number, len: number): number | null {
  const text = field(h, at, len).trim();
  return /^[0-7]{1,11}$/.test(text) ? parseInt(text, 8) : null;
}

function typeName(type: string): string {
  const names: Record<string, string> = {
    '1': 'a hard link',
    '2': 'a symbolic link',
    '5': 'a directory',
    x: 'an extended header',
    g: 'a global header',
  };
  return names[type] ?? `an entry of type ${JSON.stringify(type)}`;
}
