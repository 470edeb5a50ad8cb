import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChainWalker } from '../chain-walker';
import { ChainError, type OpenOptions, type ScanProgress } from '../event-store';

/** Reading a file log without changing it: its segments, their lines, and the chain check over them. */

const SEGMENT_RE = /^segment-(\d{12})\.jsonl$/;
const READ_CHUNK = 1 << 20;

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
 *
 * `transient`: the caller keeps no line after `onLine` returns (it parses and drops it). A chunk's whole
 * lines are then decoded as one string and handed out as slices of it (a slice keeps the whole chunk
 * alive, hence the flag): about a tenth of replay's time went to decoding line by line. A chunk that is
 * not plain ASCII is still cut line by line, so offsets stay exact bytes whatever it holds.
 */
export function scanLines(
  file: string,
  onLine: (line: string, offset: number) => void,
  onChunk?: (bytesRead: number) => void,
  transient = false,
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
      const whole = transient ? chunk.lastIndexOf(10) + 1 : 0;
      // A newline byte never sits inside a multi-byte UTF-8 sequence: the lines up to the last one decode alone.
      if (whole > 0 && isAscii(chunk.subarray(0, whole))) {
        const text = chunk.toString('latin1', 0, whole);
        for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
          onLine(text.slice(start, nl), base + start);
          start = nl + 1;
        }
      } else {
        for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
          onLine(chunk.toString('utf8', start, nl), base + start);
          start = nl + 1;
        }
      }
      carry = Buffer.from(chunk.subarray(start));
      base += start;
    }
    return { end: base, tail: carry.toString('utf8') };
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
    const { end, tail } = scanLines(file, (line) => w.record(line, seg.file), onChunk, true);
    bytesBefore += sizes[i] ?? 0;
    if (tail.length > 0) {
      if (i !== segments.length - 1) throw new ChainError(w.next, seg.file, 'unterminated record inside the log');
      torn = { segment: seg.file, end, bytes: Buffer.byteLength(tail) };
    }
  }
  walker ??= new ChainWalker(opts);
  walker.finish();
  // The head hash outlives the scan (the store chains on from it): a copy, not a slice that would keep the last
  // decoded chunk (up to 1 MiB) alive with it.
  return { lastSeq: walker.lastSeq, lastHash: Buffer.from(walker.lastHash, 'latin1').toString('latin1'), torn };
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
