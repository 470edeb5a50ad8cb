import { ChainError, ChainWalker, listSegments } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { ChainStatus } from '@svc/console-api';

const CHUNK = 1 << 20;

/** A fresh walk of a log from its head: seq 1, or the record after a cut the log records (ChainWalker's rule). */
export const headWalker = (): ChainWalker => new ChainWalker({ fromSeq: 1 }, 'head');

/** A walk that proved its records, as the console shows it: from where, up to where, and the cut it started at. */
export function verifiedStatus(walker: ChainWalker, checkedAt: number): ChainStatus {
  const cut = walker.startCut;
  return {
    state: 'verified',
    verified_to_seq: walker.lastSeq,
    from_seq: walker.fromSeq,
    cut: cut ? { seq: cut.cutSeq, at: cut.cutAt } : null,
    checked_at: checkedAt,
  };
}

export function brokenStatus(err: ChainError, checkedAt: number): ChainStatus {
  return { state: 'broken', broken_at_seq: err.seq, segment: err.segment, reason: err.reason, checked_at: checkedAt };
}

/**
 * Verifies the event chain incrementally: each check reads only the bytes appended since the last one,
 * every record through the one ChainWalker (checksums, consecutive seqs, links, and a pruned log's start at
 * a recorded cut). A full re-verification from the log's head is `reset()` then `check()`. Once broken it
 * stays broken until reset.
 */
export class ChainMonitor {
  private segment: string | null = null;
  private offset = 0;
  private walker = headWalker();
  private status: ChainStatus | null = null;

  constructor(
    private readonly dir: string,
    private readonly nowMs: () => number,
  ) {}

  reset(): void {
    this.segment = null;
    this.offset = 0;
    this.walker = headWalker();
    this.status = null;
  }

  /** A full check found a break: it stays until reset, as one found here would. */
  adopt(status: ChainStatus & { state: 'broken' }): void {
    this.status = status;
  }

  /** Reads only what was appended since the last check (a stat and a short read when idle). */
  check(force = false): ChainStatus {
    if (this.status?.state === 'broken' && !force) return this.status;
    let segments = listSegments(this.dir);
    let idx = this.segment === null ? 0 : segments.findIndex((s) => s.file === this.segment);
    if (idx < 0) {
      // The segment it had reached is gone (pruned by retention, or removed): the log is proven afresh from its head.
      this.reset();
      segments = listSegments(this.dir);
      idx = 0;
    }
    try {
      for (; idx < segments.length; idx++) {
        const seg = segments[idx];
        if (seg.file !== this.segment) {
          this.segment = seg.file;
          this.offset = 0;
        }
        this.readFrom(path.join(this.dir, seg.file), seg.file);
      }
      this.walker.finish();
    } catch (err) {
      if (!(err instanceof ChainError)) throw err;
      this.status = brokenStatus(err, this.nowMs());
      return this.status;
    }
    this.status = verifiedStatus(this.walker, this.nowMs());
    return this.status;
  }

  private readFrom(file: string, name: string): void {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      throw new ChainError(this.walker.lastSeq + 1, name, 'the segment is gone');
    }
    try {
      // Idle (the usual overview poll): one fstat, nothing read, nothing allocated.
      const size = fs.fstatSync(fd).size;
      if (size <= this.offset) return;
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, size - this.offset));
      const decoder = new StringDecoder('utf8');
      let carry = '';
      let pos = this.offset;
      for (;;) {
        const n = fs.readSync(fd, buf, 0, buf.length, pos);
        if (n === 0) break;
        pos += n;
        const text = carry + decoder.write(buf.subarray(0, n));
        const lines = text.split('\n');
        carry = lines.pop() ?? '';
        for (const line of lines) {
          this.walker.record(line, name);
          this.offset += Buffer.byteLength(line) + 1;
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}
