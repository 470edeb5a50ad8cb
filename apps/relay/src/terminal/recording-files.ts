import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openChunk, sealedHead, walkChunks } from './sealed-cast';

/** A recording's id is a shell id (a UUID): the only names the relay reads or serves in its directory. */
export const RECORDING_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function recordingsDir(svcHome: string): string {
  return path.join(svcHome, 'relay', 'recordings');
}

/** The file of a recording id (checked: never a path built from anything else). */
export function recordingFile(dir: string, recordingId: string): string {
  if (!RECORDING_ID.test(recordingId)) throw new Error(`not a recording id: ${recordingId.slice(0, 64)}`);
  return path.join(dir, `${recordingId}.cast`);
}

/** The ids of the `.cast` files in `dir` (none when it does not exist). */
export function castFiles(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => n.endsWith('.cast') && RECORDING_ID.test(n.slice(0, -5))).map((n) => n.slice(0, -5));
}

/** SHA-256 (hex) and size of a file, read in chunks. */
export async function digestFile(file: string): Promise<{ sha256: string; sizeBytes: number }> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    sizeBytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}

export type RecoveredCast = {
  sha256: string;
  sizeBytes: number;
  startedAtMs: number | null;
  durationMs: number;
  tornBytes: number;
  /** The data key a sealed recording is under (absent: a plain asciicast file). */
  keyId?: string;
};

/** The header line's start time (epoch ms), or null. */
function headerTime(line: string): number | null {
  try {
    const h = JSON.parse(line) as { timestamp?: unknown };
    return typeof h.timestamp === 'number' ? h.timestamp * 1000 : null;
  } catch {
    return null;
  }
}

/** An event line's time (ms into the recording), or 0. */
function eventTime(line: string): number {
  try {
    const ev = JSON.parse(line) as unknown;
    return Array.isArray(ev) && typeof ev[0] === 'number' ? Math.round(ev[0] * 1000) : 0;
  } catch {
    return 0;
  }
}

/**
 * A recording left by a relay that stopped without ending its shell, sealed or plain: a torn end (a write
 * cut short) is cut so the file stays readable, then its start and last event time (a sealed one's only
 * with its key), size and digest.
 */
export async function recoverRecording(file: string, recordingId: string, keyFor: (keyId: string) => Buffer | undefined): Promise<RecoveredCast> {
  const fd = fs.openSync(file, 'r+');
  let head;
  try {
    head = sealedHead(fd);
  } catch {
    head = null;
  }
  if (!head) {
    fs.closeSync(fd);
    return recoverCast(file);
  }
  let tornBytes = 0;
  let startedAtMs: number | null = null;
  let durationMs = 0;
  try {
    const { chunks, end, size } = walkChunks(fd, head.bodyStart);
    tornBytes = size - end;
    if (tornBytes > 0) {
      fs.ftruncateSync(fd, end);
      fs.fsyncSync(fd);
    }
    const key = keyFor(head.keyId);
    if (key && chunks.length > 0) {
      const open = (i: number): string[] => {
        try {
          return openChunk(fd, chunks[i], i, recordingId, head.keyId, key).toString('utf8').split('\n').filter(Boolean);
        } catch {
          return [];
        }
      };
      startedAtMs = headerTime(open(0)[0] ?? '');
      durationMs = eventTime(open(chunks.length - 1).at(-1) ?? '');
    }
  } finally {
    fs.closeSync(fd);
  }
  return { ...(await digestFile(file)), startedAtMs, durationMs, tornBytes, keyId: head.keyId };
}

/**
 * A recording left by a relay that stopped without ending its shell: a torn last line (a write cut
 * short) is cut so the file stays asciicast, then its header time, last event time, size and digest.
 */
async function recoverCast(file: string): Promise<RecoveredCast> {
  const size = fs.statSync(file).size;
  const tail = Buffer.alloc(Math.min(size, 256 * 1024));
  const fd = fs.openSync(file, 'r+');
  let tornBytes = 0;
  let lastLine = '';
  try {
    fs.readSync(fd, tail, 0, tail.length, size - tail.length);
    const nl = tail.lastIndexOf(0x0a);
    tornBytes = tail.length - (nl + 1);
    if (tornBytes > 0) {
      fs.ftruncateSync(fd, size - tornBytes);
      fs.fsyncSync(fd);
    }
    const prev = nl > 0 ? tail.lastIndexOf(0x0a, nl - 1) : -1;
    if (nl > 0) lastLine = tail.subarray(prev + 1, nl).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
  return { ...(await digestFile(file)), startedAtMs: headerTime(readFirstLine(file)), durationMs: eventTime(lastLine), tornBytes };
}

function readFirstLine(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const nl = buf.subarray(0, n).indexOf(0x0a);
    return buf.subarray(0, nl < 0 ? n : nl).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
