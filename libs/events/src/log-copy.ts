import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkLine } from './chain';
import { ChainWalker } from './chain-walker';
import { ChainError, type ScanProgress } from './event-store';
import { listSegments, scanLines, scanLog, segmentName } from './file/file-read';
import { acquireLogLock } from './file/log-lock';
import type { LogSource, LogWalk } from './log-source';
import { connectPg, redactPgUrl, TABLE } from './postgres/pg-connection';
import { takeWriterLock } from './postgres/pg-lock';
import { columnsOf, INSERT_ROWS, walkPgLog } from './postgres/pg-read';
import { migrate } from './postgres/pg-schema';

/** Where a copy of a log goes: a log directory (the file store's), one JSON-lines file, or a database. */
export type LogTarget = { kind: 'dir'; dir: string } | { kind: 'jsonl'; file: string } | { kind: 'postgres'; url: string };

export type CopyReport = { records: number; lastSeq: number; lastHash: string; target: string };

export class CopyRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyRefusedError';
  }
}

export function describeTarget(t: LogTarget): string {
  return t.kind === 'postgres' ? redactPgUrl(t.url) : t.kind === 'dir' ? t.dir : t.file;
}

/**
 * Copies a log record for record (the same seq, ids and hashes: the chain is the log's, not the copy's).
 * Each record is proven on the way (a ChainError aborts the copy and nothing is left behind), the
 * target must be empty and is locked like a writer's, and once written the target is read back and
 * proven again: the report's last hash is the target's own.
 */
export async function copyLog(source: LogSource, target: LogTarget, onProgress?: (p: ScanProgress) => void): Promise<CopyReport> {
  // The record count for progress: a second pass, but only when someone watches.
  const total = onProgress ? (await source.walk()).records : 0;
  // A pruned log is copied from its cut on (its log.pruned record travels with it).
  const walker = new ChainWalker({ fromSeq: 1 }, 'head');
  let records = 0;
  const check = async function* (): AsyncIterable<string[]> {
    for await (const page of source.pages()) {
      for (const r of page) walker.record(r, source.kind === 'postgres' ? TABLE.events : source.location);
      records += page.length;
      onProgress?.({ done: records, total: Math.max(total, records), seq: walker.lastSeq });
      yield page;
    }
    walker.finish();
  };
  let proven: LogWalk;
  if (target.kind === 'postgres') proven = await copyToPostgres(check(), target.url);
  else if (target.kind === 'dir') proven = await copyToDir(check(), target.dir);
  else proven = await copyToJsonl(check(), target.file);
  if (proven.lastSeq !== walker.lastSeq || proven.lastHash !== walker.lastHash) {
    throw new ChainError(proven.lastSeq, describeTarget(target), `the copy ends at seq ${proven.lastSeq}, the source at ${walker.lastSeq}`);
  }
  return { records, lastSeq: proven.lastSeq, lastHash: proven.lastHash, target: describeTarget(target) };
}

async function copyToPostgres(pages: AsyncIterable<string[]>, url: string): Promise<LogWalk> {
  const location = redactPgUrl(url);
  const client = await connectPg(url, 'writer');
  client.on('error', () => undefined);
  try {
    await takeWriterLock(client, location);
    await migrate(client);
    const existing = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${TABLE.events}`);
    if (Number(existing.rows[0].n) > 0) {
      throw new CopyRefusedError(`${location} already holds a log (${existing.rows[0].n} records): a copy goes only into an empty store`);
    }
    // One transaction: an interrupted copy leaves the database as it was.
    await client.query('BEGIN');
    try {
      await client.query(`DELETE FROM ${TABLE.snapshots}`);
      for await (const page of pages) {
        const cols = page.map(columnsOf);
        await client.query(INSERT_ROWS, [
          cols.map((c) => c.seq),
          cols.map((c) => c.at),
          cols.map((c) => c.type),
          cols.map((c) => c.actor),
          JSON.stringify(page),
        ]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    // Statistics for the planner now, not whenever autovacuum comes by.
    await client.query(`ANALYZE ${TABLE.events}`);
    const walk = await walkPgLog(client, { fromSeq: 1 });
    return { ...walk, tornTailBytes: 0 };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function copyToDir(pages: AsyncIterable<string[]>, dir: string, segmentBytes = 64 * 1024 * 1024): Promise<LogWalk> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = acquireLogLock(dir);
  const written: string[] = [];
  try {
    if (listSegments(dir).length > 0) throw new CopyRefusedError(`${dir} already holds a log: a copy goes only into an empty store`);
    let fd: number | null = null;
    let size = 0;
    let seq = 0;
    const closeSegment = (): void => {
      if (fd === null) return;
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fd = null;
    };
    try {
      for await (const page of pages) {
        for (const record of page) {
          // A pruned log's first record is its cut's next seq: the segment is named for it.
          seq = seq === 0 ? firstSeqOf(record) : seq + 1;
          if (fd === null || size >= segmentBytes) {
            closeSegment();
            const file = path.join(dir, segmentName(seq));
            fd = fs.openSync(file, 'wx', 0o600);
            written.push(file);
            size = 0;
          }
          size += fs.writeSync(fd, record + '\n');
        }
      }
    } finally {
      closeSegment();
    }
    const dirFd = fs.openSync(dir, 'r');
    fs.fsyncSync(dirFd);
    fs.closeSync(dirFd);
    // Snapshots beside a log that is replaced describe the old one: the relay would refuse to start on them.
    fs.rmSync(path.join(path.dirname(dir), 'snapshots'), { recursive: true, force: true });
    const r = scanLog(dir, { fromSeq: 1 });
    return { lastSeq: r.lastSeq, lastHash: r.lastHash, records: r.lastSeq, tornTailBytes: 0 };
  } catch (err) {
    for (const f of written) fs.rmSync(f, { force: true });
    throw err;
  } finally {
    lock.release();
  }
}

async function copyToJsonl(pages: AsyncIterable<string[]>, file: string): Promise<LogWalk> {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new CopyRefusedError(`${file} exists: give a new file name`);
    throw err;
  }
  try {
    try {
      for await (const page of pages) if (page.length) fs.writeSync(fd, page.join('\n') + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return walkJsonl(file);
  } catch (err) {
    fs.rmSync(file, { force: true });
    throw err;
  }
}

/** Proves a JSON-lines export (one record a line, from seq 1). */
export function walkJsonl(file: string): LogWalk {
  const walker = new ChainWalker({ fromSeq: 1 }, 'head');
  let records = 0;
  const { tail } = scanLines(file, (l) => (walker.record(l, path.basename(file)), records++));
  if (tail.length > 0) throw new ChainError(walker.next, path.basename(file), 'unterminated last record (the export was cut short)');
  walker.finish();
  return { lastSeq: walker.lastSeq, lastHash: walker.lastHash, records, tornTailBytes: 0 };
}

function firstSeqOf(record: string): number {
  const check = checkLine(record);
  return check.ok ? check.seq : 1;
}
