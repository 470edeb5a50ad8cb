import * as fs from 'node:fs';
import * as path from 'node:path';
import { GroupCommitStore, type Batch } from './group-commit';
import { ChainWalker } from './chain-walker';
import type { StoredEvent } from './event';
import { acquireLogLock } from './log-lock';
import { ChainError, type EventStore, type OpenOptions, type OpenResult, type ScanProgress } from './event-store';

const SEGMENT_RE = /^segment-(\d{12})\.jsonl$/;
const READ_CHUNK = 1 << 20;

export type FileEventStoreOptions = {
  dir: string;
  /** Start a new segment once the current one passes this size. */
  segmentBytes?: number;
  onDurable: (events: readonly StoredEvent[]) => void;
  /** Called when the store can no longer write (the relay must stop: state ran ahead of the disk). */
  onFatal?: (error: Error) => void;
};

export function segmentName(firstSeq: number): string {
  return `segment-${String(firstSeq).padStart(12, '0')}.jsonl`;
}

/** Segments of a log directory in seq order. */
export function listSegments(dir: string): Array<{ file: string; firstSeq: number }> {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((file) => ({ file, m: SEGMENT_RE.exec(file) }))
    .filter((x): x is { file: string; m: RegExpExecArray } => x.m !== null)
    .map(({ file, m }) => ({ file, firstSeq: Number(m[1]) }))
    .sort((a, b) => a.firstSeq - b.firstSeq);
}

/**
 * Calls `onLine` for each complete line of a file, streaming in 1 MiB chunks. Returns the byte offset
 * after the last complete line and the unterminated tail, if any.
 */
export function scanLines(
  file: string,
  onLine: (line: string, offset: number) => void,
  onChunk?: (bytesRead: number) => void,
): { end: number; tail: string } {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    let carry = Buffer.alloc(0);
    let base = 0; // file offset of carry[0]
    let read = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, 0, READ_CHUNK, null);
      if (n === 0) break;
      read += n;
      onChunk?.(read);
      const chunk = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        onLine(chunk.toString('utf8', start, nl), base + start);
        start = nl + 1;
      }
      carry = Buffer.from(chunk.subarray(start));
      base += start;
    }
    return { end: base, tail: carry.toString('utf8') };
  } finally {
    fs.closeSync(fd);
  }
}

export class FileEventStore extends GroupCommitStore implements EventStore {
  private fd: number | null = null;
  private segmentFile = '';
  private segmentSize = 0;
  private readonly segmentBytes: number;
  private releaseLock: () => void = () => undefined;
  readonly kind = 'file';

  constructor(private readonly options: FileEventStoreOptions) {
    super(options);
    this.segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
  }

  get location(): string {
    return this.options.dir;
  }

  protected get writable(): boolean {
    return this.fd !== null;
  }

  async open(opts: OpenOptions): Promise<OpenResult> {
    const { dir } = this.options;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Before anything is read or written (cutting a torn tail is a write): one writer per log.
    const lock = acquireLogLock(dir);
    let opened: OpenResult;
    try {
      opened = this.openLocked(dir, opts);
    } catch (err) {
      lock.release();
      throw err;
    }
    this.releaseLock = lock.release;
    return lock.tookOver ? { ...opened, staleLock: lock.tookOver } : opened;
  }

  private openLocked(dir: string, opts: OpenOptions): OpenResult {
    const scan = scanLog(dir, opts);
    let recovered: OpenResult['recovered'];
    if (scan.torn) {
      fs.truncateSync(path.join(dir, scan.torn.segment), scan.torn.end);
      recovered = { segment: scan.torn.segment, droppedBytes: scan.torn.bytes };
    }
    this.seq = scan.lastSeq;
    this.hash = scan.lastHash;
    const last = listSegments(dir).at(-1);
    this.openSegment(last ? last.file : segmentName(this.seq + 1));
    return { lastSeq: this.seq, lastHash: this.hash, recovered };
  }

  async close(): Promise<void> {
    await this.drain().catch(() => undefined);
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    this.releaseLock();
    this.releaseLock = () => undefined;
  }

  /** One write and one fdatasync per batch; appends that arrive during the fdatasync form the next batch. */
  protected async writeBatch(batch: Batch): Promise<void> {
    try {
      const written = writeAll(this.fd!, batch.lines.join('\n') + '\n');
      await datasync(this.fd!);
      this.segmentSize += written;
    } catch (err) {
      throw new Error(`event log write failed: ${(err as Error).message}`);
    }
  }

  protected override afterBatch(): void {
    if (this.segmentSize >= this.segmentBytes) this.rotate();
  }

  private openSegment(file: string): void {
    const full = path.join(this.options.dir, file);
    const existed = fs.existsSync(full);
    this.fd = fs.openSync(full, 'a', 0o600);
    fs.fchmodSync(this.fd, 0o600);
    this.segmentFile = file;
    this.segmentSize = fs.fstatSync(this.fd).size;
    if (!existed) syncDir(this.options.dir);
  }

  private rotate(): void {
    fs.closeSync(this.fd!);
    this.openSegment(segmentName(this.seq + 1));
  }
}

/**
 * The batch goes to the page cache with a synchronous write: a buffered append of a few KiB returns in
 * microseconds, while a thread-pool round trip costs tens of them on every commit. Only the fdatasync,
 * which waits for the disk, leaves the event loop.
 */
function writeAll(fd: number, text: string): number {
  const buf = Buffer.from(text);
  for (let off = 0; off < buf.length;) off += fs.writeSync(fd, buf, off, buf.length - off);
  return buf.length;
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export type ScanResult = {
  lastSeq: number;
  lastHash: string;
  /** An unterminated last line: an interrupted write, safe to cut at `end`. */
  torn?: { segment: string; end: number; bytes: number };
};

/**
 * Reads and verifies a log directory without changing it: every line's checksum, consecutive seqs, the
 * previous-hash links, and (from a snapshot) the link to the snapshot's record. Throws ChainError.
 */
export function scanLog(
  dir: string,
  opts: Omit<OpenOptions, 'onEvent'> & { onEvent?: OpenOptions['onEvent']; onProgress?: (p: ScanProgress) => void },
): ScanResult {
  const segments = listSegments(dir);
  // The oldest segment must hold seq 1 (even when a snapshot lets the scan start later): a log whose head
  // was removed would otherwise verify from whatever segment came first, and replay into a wrong state.
  if (segments.length > 0 && segments[0].firstSeq !== 1) {
    throw new ChainError(1, segments[0].file, missingHeadReason(segments[0].firstSeq));
  }
  // Start at the segment holding record fromSeq - 1, so the snapshot's hash can be checked against it.
  const anchor = Math.max(1, opts.fromSeq - 1);
  let startIdx = 0;
  for (let i = 0; i < segments.length; i++) if (segments[i].firstSeq <= anchor) startIdx = i;
  let walker: ChainWalker | null = null;
  let torn: ScanResult['torn'];

  const sizes = opts.onProgress ? segments.map((seg, i) => (i < startIdx ? 0 : fs.statSync(path.join(dir, seg.file)).size)) : [];
  const total = sizes.reduce((a, b) => a + b, 0);
  let bytesBefore = 0;
  for (let i = startIdx; i < segments.length; i++) {
    const seg = segments[i];
    const file = path.join(dir, seg.file);
    const w = (walker ??= new ChainWalker(opts, seg.firstSeq));
    const onChunk = opts.onProgress
      ? (read: number) => opts.onProgress!({ done: bytesBefore + read, total: Math.max(total, bytesBefore + read), seq: w.lastSeq })
      : undefined;
    const { end, tail } = scanLines(file, (line) => w.record(line, seg.file), onChunk);
    bytesBefore += sizes[i] ?? 0;
    if (tail.length > 0) {
      if (i !== segments.length - 1) throw new ChainError(w.next, seg.file, 'unterminated record inside the log');
      torn = { segment: seg.file, end, bytes: Buffer.byteLength(tail) };
    }
  }
  walker ??= new ChainWalker(opts);
  walker.finish();
  const { lastSeq, lastHash } = walker;
  return { lastSeq, lastHash, torn };
}

/** Why a log whose oldest segment starts after seq 1 is refused (the chain cannot be proven from its start). */
export function missingHeadReason(firstSeq: number): string {
  return `the log does not start at seq 1: its oldest segment starts at seq ${firstSeq}, so the records before it are missing`;
}

export type VerifyReport =
  | { ok: true; lastSeq: number; lastHash: string; segments: number; tornTailBytes: number }
  | { ok: false; seq: number; segment: string; reason: string };

/** What `svc relay events verify` prints: the whole chain from seq 1, or the first bad record. */
export function verifyLog(dir: string, onProgress?: (p: ScanProgress) => void): VerifyReport {
  try {
    const r = scanLog(dir, { fromSeq: 1, onProgress });
    return { ok: true, lastSeq: r.lastSeq, lastHash: r.lastHash, segments: listSegments(dir).length, tornTailBytes: r.torn?.bytes ?? 0 };
  } catch (err) {
    if (err instanceof ChainError) return { ok: false, seq: err.seq, segment: err.segment, reason: err.reason };
    throw err;
  }
}
