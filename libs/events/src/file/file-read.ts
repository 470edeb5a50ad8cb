import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChainWalker } from '../chain-walker';
import { ChainError, type OpenOptions, type RecordedCut, type ScanProgress } from '../event-store';

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

/** Names a cut whose segments are being archived or deleted (file-prune.ts). */
export const PENDING_FILE = 'prune-pending.json';

export type PendingPrune = { cutSeq: number; segments: string[]; archive: string | null };

/** The segments a reader walks: all of them but those a pending cut covers (they are on their way out). */
export function liveSegments(dir: string): Array<{ file: string; firstSeq: number }> {
  const all = listSegments(dir);
  const pending = readPending(dir);
  if (!pending) return all;
  return all.filter((s, i) => !(pending.segments.includes(s.file) && i < all.length - 1));
}

export function readPending(dir: string): PendingPrune | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, PENDING_FILE), 'utf8');
  } catch {
    return null;
  }
  const p = JSON.parse(text) as PendingPrune;
  if (!Number.isSafeInteger(p.cutSeq) || !Array.isArray(p.segments)) throw new Error(`${PENDING_FILE} in ${dir} is not a pending cut`);
  return p;
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
  /** Set when the log starts after seq 1, at this recorded cut (pruned). */
  cut?: RecordedCut;
};

/**
 * Reads and verifies a log directory without changing it: every line's checksum, consecutive seqs, the
 * previous-hash links, and (from a snapshot) the link to the snapshot's record. Throws ChainError.
 */
export function scanLog(
  dir: string,
  opts: Omit<OpenOptions, 'onEvent'> & {
    onEvent?: OpenOptions['onEvent'];
    onProgress?: (p: ScanProgress) => void;
    /** An archive of segments pruned from this log: walked first, as one chain with it. */
    archive?: string;
  },
): ScanResult {
  const segments = chainSegments(dir, opts.archive);
  // A log that starts after seq 1 (pruned) is walked whole: the record of its cut can lie anywhere in it, and
  // without one its head was removed (it would otherwise verify from whatever segment came first, and replay
  // into a wrong state). Retention keeps such a log short.
  const pruned = segments.length > 0 && segments[0].firstSeq !== 1;
  // Otherwise start at the segment holding record fromSeq - 1, so the snapshot's hash can be checked against it.
  const anchor = Math.max(1, opts.fromSeq - 1);
  let startIdx = 0;
  if (!pruned) for (let i = 0; i < segments.length; i++) if (segments[i].firstSeq <= anchor) startIdx = i;
  let walker: ChainWalker | null = null;
  let torn: ScanResult['torn'];

  const sizes = opts.onProgress ? segments.map((seg, i) => (i < startIdx ? 0 : fs.statSync(path.join(seg.dir, seg.file)).size)) : [];
  const total = sizes.reduce((a, b) => a + b, 0);
  let bytesBefore = 0;
  for (let i = startIdx; i < segments.length; i++) {
    const seg = segments[i];
    const file = path.join(seg.dir, seg.file);
    // Past seq 1 the walk takes its first record's seq from the record (a segment's name is only a hint).
    const w = (walker ??= new ChainWalker(opts, pruned ? 'head' : seg.firstSeq === 1 ? 1 : 'any'));
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
  walker ??= new ChainWalker(opts, 1);
  if (pruned && walker.startCut === null) throw new ChainError(1, segments[0].file, missingHeadReason(segments[0].firstSeq));
  walker.finish();
  // The head hash outlives the scan (the store chains on from it): a copy, not a slice that would keep the last
  // decoded chunk (up to 1 MiB) alive with it.
  return { lastSeq: walker.lastSeq, lastHash: Buffer.from(walker.lastHash, 'latin1').toString('latin1'), torn, cut: walker.startCut ?? undefined };
}

/**
 * The segments of a log as one chain: those of its archive (if given) that the live log no longer holds,
 * then the live ones (less any a pending cut covers).
 */
export function chainSegments(dir: string, archive?: string): Array<{ dir: string; file: string; firstSeq: number }> {
  const live = liveSegments(dir).map((s) => ({ ...s, dir }));
  if (archive === undefined) return live;
  const first = live[0]?.firstSeq ?? Infinity;
  const archived = listSegments(archive)
    .filter((s) => s.firstSeq < first)
    .map((s) => ({ ...s, dir: archive }));
  return [...archived, ...live];
}

/** Why a log whose oldest segment starts after seq 1 is refused (the chain cannot be proven from its start). */
export function missingHeadReason(firstSeq: number): string {
  return `the log does not start at seq 1: its oldest segment starts at seq ${firstSeq}, so the records before it are missing (and no recorded cut says they were pruned)`;
}

export type VerifyReport =
  | { ok: true; lastSeq: number; lastHash: string; segments: number; tornTailBytes: number; cut?: RecordedCut }
  | { ok: false; seq: number; segment: string; reason: string };

/** What `svc relay events verify` prints: the whole chain from seq 1, or the first bad record. */
export function verifyLog(dir: string, onProgress?: (p: ScanProgress) => void): VerifyReport {
  try {
    const r = scanLog(dir, { fromSeq: 1, onProgress });
    return { ok: true, lastSeq: r.lastSeq, lastHash: r.lastHash, segments: liveSegments(dir).length, tornTailBytes: r.torn?.bytes ?? 0, cut: r.cut };
  } catch (err) {
    if (err instanceof ChainError) return { ok: false, seq: err.seq, segment: err.segment, reason: err.reason };
    throw err;
  }
}
