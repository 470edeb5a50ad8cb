import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * A terminal recording sealed under its device's data key (issue 34, finding 8): the asciicast lines are
 * encrypted chunk by chunk as the recording writes them, so no shell output is on disk in plain text and
 * forgetting the device's key (`svc relay events forget`, revoke with forget, retention) forgets the
 * recording, copies and backups included. The file:
 *
 *   {"svc_sealed_cast":1,"key":"<data key id>"}\n           one plain JSON line: which key, never content
 *   [u32 BE n][12-byte IV][n bytes: AES-256-GCM ciphertext and its 16-byte tag]   then chunks, one a write
 *
 * Each chunk's associated data names the recording, the key and the chunk's index, so chunks can be neither
 * moved between recordings nor reordered. The SHA-256 in `terminal.recording_saved` is of these sealed bytes:
 * `svc relay events verify` needs no key. The console serves the asciicast opened, while the key exists.
 */
const FORMAT = 1;
const AAD_PREFIX = 'svc-sealed-cast/1\0';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const LEN_BYTES = 4;
/** Bytes a chunk adds to what it seals. */
export const CHUNK_OVERHEAD = LEN_BYTES + IV_BYTES + TAG_BYTES;
/** A chunk is one write of a recording (at most its 8 MiB backlog): a longer length is a damaged file. */
export const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
const MAX_HEAD_BYTES = 512;

export class DamagedCastError extends Error {}

const aad = (recordingId: string, keyId: string, index: number) => Buffer.from(`${AAD_PREFIX}${recordingId}\0${keyId}\0${index}`);

/** Seals a recording's writes in order: the first one carries the plain head line. */
export class CastSealer {
  private index = 0;
  private readonly head: Buffer;

  constructor(
    private readonly recordingId: string,
    readonly keyId: string,
    private readonly key: Buffer,
  ) {
    this.head = Buffer.from(JSON.stringify({ svc_sealed_cast: FORMAT, key: keyId }) + '\n');
  }

  /** What the next `seal` adds to the bytes it is given. */
  nextOverhead(): number {
    return CHUNK_OVERHEAD + (this.index === 0 ? this.head.length : 0);
  }

  seal(plain: Buffer): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aad(this.recordingId, this.keyId, this.index));
    const ct = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    const len = Buffer.alloc(LEN_BYTES);
    len.writeUInt32BE(ct.length);
    const parts = this.index === 0 ? [this.head, len, iv, ct] : [len, iv, ct];
    this.index++;
    return Buffer.concat(parts);
  }
}

/** The head of a sealed recording (its key and where the chunks start), or null for a plain asciicast file. */
export function sealedHead(fd: number): { keyId: string; bodyStart: number } | null {
  const buf = Buffer.alloc(MAX_HEAD_BYTES);
  const n = fs.readSync(fd, buf, 0, buf.length, 0);
  if (n === 0 || !buf.subarray(0, n).toString('latin1').startsWith('{"svc_sealed_cast"')) return null;
  const nl = buf.subarray(0, n).indexOf(0x0a);
  let head: { svc_sealed_cast?: unknown; key?: unknown } = {};
  try {
    head = nl > 0 ? (JSON.parse(buf.subarray(0, nl).toString('utf8')) as typeof head) : {};
  } catch {
    head = {};
  }
  if (head.svc_sealed_cast !== FORMAT || typeof head.key !== 'string' || head.key.length > 80)
    throw new DamagedCastError('not a sealed recording this relay reads');
  return { keyId: head.key, bodyStart: nl + 1 };
}

type Chunk = { offset: number; length: number };

/**
 * The whole chunks after `bodyStart` and where they end: what lies past `end` is a torn last chunk (a write
 * cut short by a crash) or, with `damaged`, a length no chunk can have (changed bytes).
 */
export function walkChunks(fd: number, bodyStart: number): { chunks: Chunk[]; end: number; size: number; damaged: boolean } {
  const size = fs.fstatSync(fd).size;
  const len = Buffer.alloc(LEN_BYTES);
  const chunks: Chunk[] = [];
  let at = bodyStart;
  while (at + LEN_BYTES <= size) {
    fs.readSync(fd, len, 0, LEN_BYTES, at);
    const n = len.readUInt32BE(0);
    if (n < TAG_BYTES || n > MAX_CHUNK_BYTES) return { chunks, end: at, size, damaged: true };
    if (at + LEN_BYTES + IV_BYTES + n > size) break;
    chunks.push({ offset: at, length: n });
    at += LEN_BYTES + IV_BYTES + n;
  }
  return { chunks, end: at, size, damaged: false };
}

/** One chunk opened (throws when it does not open under the key: another key, or changed bytes). */
export function openChunk(fd: number, chunk: Chunk, index: number, recordingId: string, keyId: string, key: Buffer): Buffer {
  const body = Buffer.alloc(IV_BYTES + chunk.length);
  fs.readSync(fd, body, 0, body.length, chunk.offset + LEN_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES));
  decipher.setAAD(aad(recordingId, keyId, index));
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new DamagedCastError(`chunk ${index} does not open under key ${keyId}`);
  }
}

/** The asciicast a sealed recording holds, chunk by chunk (the file stays open until the last one is read). */
export async function* openedCast(file: string, recordingId: string, key: Buffer): AsyncGenerator<Buffer> {
  const fd = fs.openSync(file, 'r');
  try {
    const head = sealedHead(fd);
    if (!head) throw new DamagedCastError('not a sealed recording');
    const { chunks, end, size, damaged } = walkChunks(fd, head.bodyStart);
    if (damaged || end !== size) throw new DamagedCastError('the recording ends in a damaged chunk');
    for (const [i, c] of chunks.entries()) {
      yield openChunk(fd, c, i, recordingId, head.keyId, key);
      // Between chunks the event loop gets a turn (a 64 MiB recording is a thousand of them).
      await new Promise<void>((r) => setImmediate(r));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** How many bytes `openedCast` yields (the sealed bytes less each chunk's overhead and the head); null for a damaged file. */
export function openedSize(fd: number, bodyStart: number): number | null {
  const walk = walkChunks(fd, bodyStart);
  if (walk.damaged || walk.end !== walk.size) return null;
  return walk.chunks.reduce((n, c) => n + c.length - TAG_BYTES, 0);
}

/** Where a plain recording is sealed before it replaces the original (a leftover of a stop is removed at start). */
export const SEALING_SUFFIX = '.sealing';
const SEAL_READ_BYTES = 1024 * 1024;

/**
 * Seals a plain asciicast recording (written before recordings were sealed) in place: the sealed copy is
 * written beside it, fsynced and renamed over it, so a reader sees the plain file or the sealed one. A file
 * already sealed (a relay stopped after the rename) is left as it is. The key the file is sealed under.
 */
export function sealPlainFile(file: string, recordingId: string, keyId: string, key: Buffer): string {
  const tmp = file + SEALING_SUFFIX;
  const src = fs.openSync(file, 'r');
  let already: { keyId: string } | null;
  try {
    already = sealedHead(src);
    if (!already) writeSealedCopy(src, tmp, new CastSealer(recordingId, keyId, key));
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  } finally {
    fs.closeSync(src);
  }
  if (!already) {
    fs.renameSync(tmp, file);
    const dir = fs.openSync(path.dirname(file), 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  }
  return already?.keyId ?? keyId;
}

function writeSealedCopy(src: number, tmp: string, sealer: CastSealer): void {
  const out = fs.openSync(tmp, 'w', 0o600);
  try {
    const buf = Buffer.alloc(SEAL_READ_BYTES);
    for (let at = 0; ;) {
      const n = fs.readSync(src, buf, 0, buf.length, at);
      if (n === 0) break;
      at += n;
      fs.writeSync(out, sealer.seal(buf.subarray(0, n)));
    }
    fs.fsyncSync(out);
  } finally {
    fs.closeSync(out);
  }
}
