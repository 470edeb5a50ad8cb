import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkLine } from '../chain';
import { liveSegments, PENDING_FILE, readPending, type PendingPrune } from './file-read';

/**
 * Cutting the head off a file log, in whole segments, so that a crash at any point leaves a log that starts
 * and verifies. The order (docs/OPERATING.md, retention): the `log.pruned` record and the signed checkpoint
 * of the cut are durable first (the caller's part); then PENDING_FILE names the cut; then the segments are
 * copied to the archive (if any) and deleted oldest first; then PENDING_FILE goes. Readers skip the segments
 * a pending cut covers, so a half-done prune reads as the finished one, and the writer finishes it at open.
 */

/** A segment that is not the last one, with its last record. */
export type SegmentSpan = { file: string; firstSeq: number; lastSeq: number; lastHash: string; lastAt: string };

export type PrunePlan = { drop: SegmentSpan[]; cutSeq: number; cutHash: string; cutAt: string };

/**
 * Which whole segments go: from the oldest on, each one whose records are all before the cut (`beforeSeq`,
 * or older than `before`), never the segment being written and never one with a record newer than the
 * snapshot start-up will restore (`snapshotSeq`). Null when nothing goes.
 */
export function planPrune(dir: string, cut: { beforeSeq?: number; before?: Date; snapshotSeq: number }): PrunePlan | null {
  const segments = liveSegments(dir);
  const drop: SegmentSpan[] = [];
  for (let i = 0; i + 1 < segments.length; i++) {
    // The records, not the names (a segment of an older relay could be named past its first record).
    const last = lastRecord(path.join(dir, segments[i].file));
    const lastSeq = last.seq;
    if (lastSeq > cut.snapshotSeq) break;
    if (cut.beforeSeq !== undefined && lastSeq >= cut.beforeSeq) break;
    if (cut.before !== undefined && !(Date.parse(last.at) < cut.before.getTime())) break;
    drop.push({
      file: segments[i].file,
      firstSeq: drop.length ? drop[drop.length - 1].lastSeq + 1 : firstRecordSeq(path.join(dir, segments[i].file)),
      lastSeq,
      lastHash: last.hash,
      lastAt: last.at,
    });
  }
  const end = drop.at(-1);
  return end ? { drop, cutSeq: end.lastSeq, cutHash: end.lastHash, cutAt: end.lastAt } : null;
}

/**
 * Carries out a planned cut whose `log.pruned` record is already durable: names it in PENDING_FILE, copies
 * the segments to `archive` (fsynced), deletes them oldest first, and clears PENDING_FILE.
 */
export function applyPrune(dir: string, plan: PrunePlan, archive: string | null): void {
  const pending: PendingPrune = { cutSeq: plan.cutSeq, segments: plan.drop.map((s) => s.file), archive };
  writeDurably(path.join(dir, PENDING_FILE), JSON.stringify(pending) + '\n');
  finishPending(dir);
}

/** Finishes a cut a crash interrupted (the writer calls it at open, under the lock); false when none was pending. */
export function finishPending(dir: string): boolean {
  const pending = readPending(dir);
  if (!pending) return false;
  if (pending.archive !== null) {
    fs.mkdirSync(pending.archive, { recursive: true, mode: 0o700 });
    for (const file of pending.segments) {
      const from = path.join(dir, file);
      if (fs.existsSync(from)) copyDurably(from, path.join(pending.archive, file));
    }
    syncDir(pending.archive);
  }
  for (const file of pending.segments) fs.rmSync(path.join(dir, file), { force: true });
  syncDir(dir);
  fs.rmSync(path.join(dir, PENDING_FILE), { force: true });
  syncDir(dir);
  return true;
}

/** The seq of a segment's first record. */
function firstRecordSeq(file: string): number {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(32);
    const n = fs.readSync(fd, buf, 0, 32, 0);
    const m = /^\{"seq":(\d+),/.exec(buf.toString('latin1', 0, n));
    if (!m) throw new Error(`${path.basename(file)}: its first record is malformed`);
    return Number(m[1]);
  } finally {
    fs.closeSync(fd);
  }
}

/** The last complete record of a segment (read from its end). */
function lastRecord(file: string): { seq: number; hash: string; at: string } {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    for (let want = 64 * 1024; ; want *= 4) {
      const start = Math.max(0, size - want);
      const buf = Buffer.alloc(size - start);
      fs.readSync(fd, buf, 0, buf.length, start);
      const text = buf.toString('utf8').replace(/\n$/, '');
      const nl = text.lastIndexOf('\n');
      if (nl >= 0 || start === 0) {
        const line = text.slice(nl + 1);
        const check = checkLine(line);
        if (!check.ok) throw new Error(`${path.basename(file)}: its last record fails its checksum (${check.reason})`);
        return { seq: check.seq, hash: check.hash, at: (JSON.parse(line) as { at: string }).at };
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

function copyDurably(from: string, to: string): void {
  const tmp = `${to}.tmp`;
  fs.copyFileSync(from, tmp);
  fs.chmodSync(tmp, 0o600);
  const fd = fs.openSync(tmp, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, to);
}

function writeDurably(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncDir(path.dirname(file));
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
