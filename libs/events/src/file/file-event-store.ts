import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoredEvent } from '../event';
import type { EventStore, OpenOptions, OpenResult } from '../event-store';
import { GroupCommitStore, type Batch } from '../group-commit';
import { listSegments, scanLog, segmentName } from './file-read';
import { acquireLogLock } from './log-lock';
import { finishPending } from './file-prune';

export type FileEventStoreOptions = {
  dir: string;
  /** Start a new segment once the current one passes this size. */
  segmentBytes?: number;
  onDurable: (events: readonly StoredEvent[]) => void;
  /** Called when the store can no longer write (the relay must stop: state ran ahead of the disk). */
  onFatal?: (error: Error) => void;
};

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
    // A cut a crash interrupted is finished before anything is read (readers already skip its segments).
    finishPending(dir);
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
    return { lastSeq: this.seq, lastHash: this.hash, recovered, cut: scan.cut };
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

  protected override afterBatch(written: Batch): void {
    if (this.segmentSize >= this.segmentBytes) this.rotate(written.events.at(-1)!.seq);
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

  /**
   * The next segment is named for the record after the last one written: `this.seq` may already count
   * appends stamped during the write, which go to the new segment (before, such a segment was named past its
   * first record, and readers that pick a segment by its name now read the records, not the name).
   */
  private rotate(lastWritten: number): void {
    fs.closeSync(this.fd!);
    this.openSegment(segmentName(lastWritten + 1));
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
