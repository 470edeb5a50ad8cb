import { checkLine, GENESIS_HASH, listSegments, missingHeadReason } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { ChainStatus } from '@svc/console-api';

const CHUNK = 1 << 20;

/**
 * Verifies the event chain incrementally: each check reads only the bytes appended since the last one
 * (every line's checksum, consecutive seqs, previous-hash links, across segment boundaries). A full
 * re-verification from seq 1 is `reset()` then `check()`. Once broken it stays broken until reset.
 */
export class ChainMonitor {
  private segment: string | null = null;
  private offset = 0;
  private expectedSeq = 1;
  private prev = GENESIS_HASH;
  private status: ChainStatus | null = null;

  constructor(
    private readonly dir: string,
    private readonly nowMs: () => number,
  ) {}

  reset(): void {
    this.segment = null;
    this.offset = 0;
    this.expectedSeq = 1;
    this.prev = GENESIS_HASH;
    this.status = null;
  }

  /** A full check found a break: it stays until reset, as one found here would. */
  adopt(status: ChainStatus & { state: 'broken' }): void {
    this.status = status;
  }

  /** Reads only what was appended since the last check (a stat and a short read when idle). */
  check(force = false): ChainStatus {
    if (this.status?.state === 'broken' && !force) return this.status;
    const segments = listSegments(this.dir);
    let idx = this.segment === null ? 0 : segments.findIndex((s) => s.file === this.segment);
    if (idx < 0) return this.fail(this.segment ?? '?', 'a segment that was verified is gone');
    if (this.segment === null && segments[0] && segments[0].firstSeq !== 1) {
      // The head of the log is gone: nothing after it can be proven from seq 1.
      return this.fail(segments[0].file, missingHeadReason(segments[0].firstSeq));
    }
    for (; idx < segments.length; idx++) {
      const seg = segments[idx];
      if (seg.file !== this.segment) {
        this.segment = seg.file;
        this.offset = 0;
      }
      const verdict = this.readFrom(path.join(this.dir, seg.file));
      if (verdict) return this.fail(seg.file, verdict);
    }
    this.status = { state: 'verified', verified_to_seq: this.expectedSeq - 1, checked_at: this.nowMs() };
    return this.status;
  }

  private readFrom(file: string): string | null {
    const fd = fs.openSync(file, 'r');
    try {
      // Idle (the usual overview poll): one fstat, nothing read, nothing allocated.
      const size = fs.fstatSync(fd).size;
      if (size <= this.offset) return null;
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
          const c = checkLine(line);
          if (!c.ok) return `seq ${this.expectedSeq}: ${c.reason}`;
          if (c.seq !== this.expectedSeq) return `expected seq ${this.expectedSeq}, found ${c.seq}`;
          if (c.prev !== this.prev) return `seq ${c.seq}: previous-hash link does not match`;
          this.prev = c.hash;
          this.expectedSeq = c.seq + 1;
          this.offset += Buffer.byteLength(line) + 1;
        }
      }
      return null;
    } finally {
      fs.closeSync(fd);
    }
  }

  private fail(segment: string, reason: string): ChainStatus {
    this.status = { state: 'broken', broken_at_seq: this.expectedSeq, segment, reason, checked_at: this.nowMs() };
    return this.status;
  }
}
