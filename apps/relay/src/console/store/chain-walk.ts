import type { ChainCut } from '@svc/console-api';
import { ChainError, ChainWalker, columnsDisagree, listSegments, pageQuery, TABLE, type PgLogSource, type PgRow } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { headWalker } from '../chain-monitor';
import { nextRowSeq } from '../pg-console-log';

export type WalkProgress = { records: number; bytesDone: number | null; bytesTotal: number | null };

/** How a full check may go on: its bound, a pause between pieces, a way to stop, where progress goes. */
export type WalkControl = {
  /** The last durable seq when the check started: what it proves (later records are the incremental monitor's). */
  upTo: number;
  /** How much of a segment one piece reads. */
  chunkBytes: number;
  /** Awaited after each chunk or page: the event loop's turn (tests hold a check here). */
  pace: () => Promise<void>;
  stopped: () => boolean;
  onProgress: (p: WalkProgress) => void;
};

export type WalkOutcome =
  | { state: 'verified'; records: number; fromSeq: number; cut: ChainCut | null }
  | { state: 'broken'; records: number; seq: number; segment: string; reason: string }
  | { state: 'cancelled'; records: number };

function verified(walker: ChainWalker): WalkOutcome {
  const cut = walker.startCut;
  return { state: 'verified', records: walker.lastSeq, fromSeq: walker.fromSeq, cut: cut ? { seq: cut.cutSeq, at: cut.cutAt } : null };
}

/**
 * The chain from its head (seq 1, or the record after a cut the log records) to `upTo` of a file log, read with non-blocking reads a MiB at a time and a pause
 * after each, so phones are served while a big log is proven (`svc relay events verify` reads the same
 * rules synchronously: nothing else waits on it). The same ChainWalker as every other check.
 */
export async function walkFileLog(dir: string, ctl: WalkControl): Promise<WalkOutcome> {
  const walker = headWalker();
  const segments = listSegments(dir);
  const broken = (err: ChainError): WalkOutcome => ({
    state: 'broken',
    records: walker.lastSeq,
    seq: err.seq,
    segment: err.segment,
    reason: err.reason,
  });
  const sizes = segments.map((s) => sizeOf(path.join(dir, s.file)));
  const total = sizes.reduce((a, b) => a + b, 0);
  let done = 0;
  const buf = Buffer.allocUnsafe(ctl.chunkBytes);
  try {
    for (let i = 0; i < segments.length && walker.lastSeq < ctl.upTo; i++) {
      const seg = segments[i];
      let fh: fs.promises.FileHandle;
      try {
        fh = await fs.promises.open(path.join(dir, seg.file), 'r');
      } catch {
        throw new ChainError(walker.next, seg.file, 'the segment is gone');
      }
      try {
        let carry = Buffer.alloc(0);
        let pos = 0;
        while (walker.lastSeq < ctl.upTo) {
          const { bytesRead } = await fh.read(buf, 0, ctl.chunkBytes, pos);
          if (bytesRead === 0) break;
          pos += bytesRead;
          done += bytesRead;
          const chunk = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
          let start = 0;
          for (let nl = chunk.indexOf(10); nl !== -1 && walker.lastSeq < ctl.upTo; nl = chunk.indexOf(10, start)) {
            walker.record(chunk.toString('utf8', start, nl), seg.file);
            start = nl + 1;
          }
          carry = Buffer.from(chunk.subarray(start));
          ctl.onProgress({ records: walker.lastSeq, bytesDone: done, bytesTotal: Math.max(total, done) });
          if (ctl.stopped()) return { state: 'cancelled', records: walker.lastSeq };
          await ctl.pace();
        }
        if (carry.length > 0 && walker.lastSeq < ctl.upTo && i < segments.length - 1) {
          throw new ChainError(walker.next, seg.file, 'unterminated record inside the log');
        }
      } finally {
        await fh.close();
      }
    }
    if (walker.lastSeq < ctl.upTo) {
      throw new ChainError(walker.next, segments.at(-1)?.file ?? '(no segment)', `expected seq ${walker.next}: it is missing`);
    }
    walker.finish();
  } catch (err) {
    if (err instanceof ChainError) return broken(err);
    throw err;
  }
  return verified(walker);
}

/** The same check over the database's table, a page of rows at a time, each row's columns against its record. */
export async function walkPgLog(source: PgLogSource, ctl: WalkControl): Promise<WalkOutcome> {
  const walker = headWalker();
  try {
    const c = await source.connection();
    for (let from = await nextRowSeq(c, walker); from <= ctl.upTo; from = walker.next) {
      const r = await c.query<PgRow>(pageQuery(from, ctl.upTo));
      if (r.rows.length === 0) throw new ChainError(from, TABLE.events, `expected seq ${from}: it is missing`);
      for (const row of r.rows) {
        walker.record(row.record, TABLE.events);
        const disagree = columnsDisagree(row);
        if (disagree) throw new ChainError(Number(row.seq), TABLE.events, disagree);
      }
      ctl.onProgress({ records: walker.lastSeq, bytesDone: null, bytesTotal: null });
      if (ctl.stopped()) return { state: 'cancelled', records: walker.lastSeq };
      await ctl.pace();
    }
    walker.finish();
  } catch (err) {
    if (err instanceof ChainError) return { state: 'broken', records: walker.lastSeq, seq: err.seq, segment: err.segment, reason: err.reason };
    throw err;
  }
  return verified(walker);
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0; // gone between list and stat: the walk names it
  }
}
