import type { RecordingStopReason } from '@svc/events';
import { createHash, type Hash } from 'node:crypto';
import * as fs from 'node:fs';
import type { CastSealer } from './sealed-cast';

/** What a shell tells its recording: output, typed input, a new size. Each call returns at once. */
export type ShellRecorder = {
  output(text: string): void;
  input(text: string): void;
  resize(cols: number, rows: number): void;
};

/** The few file calls a recording makes (a unit test watches their order). */
export type RecordingFs = {
  open(file: string): number;
  write(fd: number, buf: Buffer): Promise<void>;
  fsync(fd: number): Promise<void>;
  close(fd: number): Promise<void>;
  unlink(file: string): Promise<void>;
};

/** Appends on an fd opened exclusively (never an existing file), 0600. */
export const nodeRecordingFs: RecordingFs = {
  open: (file) => fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_APPEND, 0o600),
  async write(fd, buf) {
    let off = 0;
    while (off < buf.length)
      off += await new Promise<number>((res, rej) => fs.write(fd, buf, off, buf.length - off, null, (e, n) => (e ? rej(e) : res(n))));
  },
  fsync: (fd) => new Promise((res, rej) => fs.fsync(fd, (e) => (e ? rej(e) : res()))),
  close: (fd) => new Promise((res, rej) => fs.close(fd, (e) => (e ? rej(e) : res()))),
  unlink: (file) => fs.promises.unlink(file).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e))),
};

/** The asciicast v2 header (the asciinema format's first line). */
export type CastHeader = { width: number; height: number; timestamp: number; shell: string; term: string; title: string };

export type RecordingOptions = {
  file: string;
  header: CastHeader;
  /** Past this many bytes in the file, output is no longer written (the recording is marked truncated). */
  maxBytes: number;
  /** Record typed input (`"i"` lines); off, input is never written. */
  input: boolean;
  /** Seals each write under the device's data key (sealed-cast.ts); none: the file is plain asciicast. */
  sealer?: CastSealer;
  /** Writes wait for this (the data key stored in its database); a rejection fails the recording. */
  ready?: Promise<void>;
  fs?: RecordingFs;
  /** Seconds since the recording began (monotonic). */
  elapsed?: () => number;
  /** A write is started once this much is buffered (and by the timer). */
  flushBytes?: number;
  flushMs?: number;
  /** Buffered plus in-flight bytes one recording may hold; past it (a stalled disk) recording stops, the shell does not. */
  maxPendingBytes?: number;
  /**
   * Asked before each write, in order: why the bytes may not go to the file (the disk guard's reserve, the
   * total cap), or null. A refusal stops the recording there: nothing after it is written.
   */
  admit?: (bytes: number) => Promise<RecordingStopReason | null> | RecordingStopReason | null;
  /** Told once, when the recording stops before its shell ends. */
  onStop?: (reason: RecordingStopReason) => void;
  onError?: (err: Error) => void;
};

export type RecordingResult = {
  sizeBytes: number;
  sha256: string;
  durationMs: number;
  truncated: boolean;
  /** Why it stopped before the shell ended, or null. */
  stopped: RecordingStopReason | null;
  input: boolean;
};

export const FLUSH_BYTES = 64 * 1024;
export const FLUSH_MS = 1000;
export const MAX_PENDING_BYTES = 8 * 1024 * 1024;

function hrElapsed(): () => number {
  const t0 = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - t0) / 1e9;
}

/** asciicast times: seconds with microseconds, as asciinema writes them. */
const secs = (t: number): number => Math.round(t * 1e6) / 1e6;

/**
 * One shell's asciicast v2 file, written as the shell runs: lines are buffered and appended in order on an
 * open fd (one write in flight at a time) when 64 KiB gather and at least every second, so a crash loses at
 * most the last second. The SHA-256 is computed over exactly the bytes handed to the file, as they are.
 * The pty path only formats a line and pushes it: no call here waits on the disk.
 */
export class Recording implements ShellRecorder {
  private readonly fs: RecordingFs;
  private readonly fd: number;
  private readonly hash: Hash = createHash('sha256');
  private readonly elapsed: () => number;
  private readonly flushBytes: number;
  private readonly maxPending: number;
  private readonly timer: NodeJS.Timeout;
  private lines: string[] = [];
  private buffered = 0;
  /** Bytes handed to the file so far (written or in flight): what the cap counts. */
  private committed = 0;
  private inFlight = 0;
  private written = 0;
  private chain: Promise<void> = Promise.resolve();
  private failed: Error | null = null;
  private ended = false;
  /** Set by a refused write (or a forgetting): the bytes still queued are dropped, so the file has no gap. */
  private closed = false;
  private cols: number;
  private rows: number;
  stopped: RecordingStopReason | null = null;

  constructor(private readonly opts: RecordingOptions) {
    this.fs = opts.fs ?? nodeRecordingFs;
    this.elapsed = opts.elapsed ?? hrElapsed();
    this.flushBytes = opts.flushBytes ?? FLUSH_BYTES;
    this.maxPending = opts.maxPendingBytes ?? MAX_PENDING_BYTES;
    this.fd = this.fs.open(opts.file);
    if (opts.ready)
      this.chain = opts.ready.catch((err: Error) => {
        this.failed = err;
        this.opts.onError?.(err);
      });
    const h = opts.header;
    this.cols = h.width;
    this.rows = h.height;
    this.push(
      JSON.stringify({
        version: 2,
        width: h.width,
        height: h.height,
        timestamp: h.timestamp,
        env: { SHELL: h.shell, TERM: h.term },
        title: h.title,
      }) + '\n',
    );
    this.timer = setInterval(() => this.flush(), opts.flushMs ?? FLUSH_MS);
    this.timer.unref();
  }

  output(text: string): void {
    if (text.length > 0) this.event('o', text);
  }

  input(text: string): void {
    if (this.opts.input && text.length > 0) this.event('i', text);
  }

  resize(cols: number, rows: number): void {
    if (cols === this.cols && rows === this.rows) return;
    this.cols = cols;
    this.rows = rows;
    this.event('r', `${cols}x${rows}`);
  }

  /** Everything written, fsynced and closed, then its size and digest (the saved event comes after this). */
  async finish(): Promise<RecordingResult> {
    const durationMs = Math.round(this.elapsed() * 1000);
    this.end();
    await this.chain;
    try {
      if (!this.failed) await this.fs.fsync(this.fd);
    } finally {
      await this.fs.close(this.fd);
    }
    if (this.failed) throw this.failed;
    return {
      sizeBytes: this.written,
      sha256: this.hash.digest('hex'),
      durationMs,
      truncated: this.stopped !== null,
      stopped: this.stopped,
      input: this.opts.input,
    };
  }

  get truncated(): boolean {
    return this.stopped !== null;
  }

  /**
   * Nothing more is recorded; with `drop`, nothing more is written either (what is buffered or queued
   * goes). The first reason is the one kept.
   */
  stop(reason: RecordingStopReason, drop: boolean): void {
    if (drop) {
      this.closed = true;
      this.lines = [];
      this.buffered = 0;
    }
    if (this.stopped) return;
    this.stopped = reason;
    this.opts.onStop?.(reason);
  }

  /** The shell never became one (its opening was refused): the file goes. */
  async discard(): Promise<void> {
    this.lines = [];
    this.buffered = 0;
    this.end();
    await this.chain.catch(() => undefined);
    await this.fs.close(this.fd).catch(() => undefined);
    await this.fs.unlink(this.opts.file);
  }

  private end(): void {
    if (this.ended) return;
    this.flush();
    this.ended = true;
    clearInterval(this.timer);
  }

  private event(kind: 'o' | 'i' | 'r', data: string): void {
    if (this.ended || this.stopped) return;
    const line = `[${secs(this.elapsed())}, "${kind}", ${JSON.stringify(data)}]\n`;
    const bytes = Buffer.byteLength(line);
    // What fits is kept and still written; the line past the bound and everything after it is not recorded.
    const overhead = this.opts.sealer?.nextOverhead() ?? 0;
    if (this.committed + overhead + this.buffered + bytes > this.opts.maxBytes) return this.stop('max_bytes', false);
    if (this.inFlight + this.buffered + bytes > this.maxPending) return this.stop('disk_stalled', false);
    this.push(line, bytes);
  }

  private push(line: string, bytes = Buffer.byteLength(line)): void {
    this.lines.push(line);
    this.buffered += bytes;
    if (this.buffered >= this.flushBytes) this.flush();
  }

  /** Hands what is buffered to the file, after every earlier write (each write first admitted: disk, total cap). */
  private flush(): void {
    if (this.ended || this.buffered === 0 || this.failed || this.closed) return;
    const plain = Buffer.from(this.lines.length === 1 ? this.lines[0] : this.lines.join(''));
    const buf = this.opts.sealer ? this.opts.sealer.seal(plain) : plain;
    this.lines = [];
    this.buffered = 0;
    this.committed += buf.length;
    this.inFlight += buf.length;
    this.chain = this.chain.then(async () => {
      try {
        if (this.failed || this.closed) return;
        const refused = (await this.opts.admit?.(buf.length)) ?? null;
        if (refused) return this.stop(refused, true);
        // Stopped meanwhile (a forgetting): the bytes are not written.
        if (this.closed) return;
        this.hash.update(buf);
        await this.fs.write(this.fd, buf);
        this.written += buf.length;
      } catch (err) {
        this.failed = err as Error;
        this.opts.onError?.(this.failed);
      } finally {
        this.inFlight -= buf.length;
      }
    });
  }
}
