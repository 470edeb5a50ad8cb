import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChainWalker } from './chain-walker';
import type { StoredEvent } from './event';
import { ChainError, type RecordedCut, type ScanProgress } from './event-store';
import { chainSegments, liveSegments, listSegments, scanLines, scanLog } from './file/file-read';
import { LazyPgConnection, redactPgUrl, TABLE, type PgClient } from './postgres/pg-connection';
import { pageQuery, walkPgLog, type PgRow } from './postgres/pg-read';
import { schemaVersion } from './postgres/pg-schema';

export type LogWalk = {
  lastSeq: number;
  lastHash: string;
  records: number;
  tornTailBytes: number;
  /** The recorded cut a pruned log starts at (proven from `cutSeq + 1` on); absent: from seq 1. */
  cut?: RecordedCut;
};

/** What a proven walk reports, or where the proof fails (the first bad record). */
export type LogVerifyReport = ({ ok: true } & LogWalk & { containers: number }) | { ok: false; seq: number; segment: string; reason: string };

/**
 * A log to read, wherever it is: a directory of segments or a database. Read-only: nothing is locked
 * and nothing cut, so an auditor can read beside a running relay.
 */
export interface LogSource {
  readonly kind: 'file' | 'postgres';
  /** Printable: a directory, or a database URL without its password. */
  readonly location: string;
  /** Segments of a directory; 1 for a database table (0 when empty). */
  containers(): Promise<number>;
  /** Proves the chain from seq 1 (the same ChainWalker for both), handing each record on. Throws ChainError. */
  walk(opts?: { onEvent?: (e: StoredEvent) => void; onProgress?: (p: ScanProgress) => void }): Promise<LogWalk>;
  /** The exact records in seq order, a page at a time (unverified: feed them to a ChainWalker). */
  pages(): AsyncIterable<string[]>;
  close(): Promise<void>;
}

export async function verifySource(source: LogSource, onProgress?: (p: ScanProgress) => void): Promise<LogVerifyReport> {
  try {
    const walk = await source.walk({ onProgress });
    return { ok: true, ...walk, containers: await source.containers() };
  } catch (err) {
    if (err instanceof ChainError) return { ok: false, seq: err.seq, segment: err.segment, reason: err.reason };
    throw err;
  }
}

export class FileLogSource implements LogSource {
  readonly kind = 'file';
  /** `archive`: segments pruned from this log, walked first as one chain with it (`verify --archive`). */
  constructor(
    readonly location: string,
    private readonly archive?: string,
  ) {}

  containers(): Promise<number> {
    return Promise.resolve(liveSegments(this.location).length);
  }

  /** The segments walked as one chain: the archive's the log no longer holds, then the live ones. */
  segments(): Array<{ dir: string; file: string; firstSeq: number }> {
    return chainSegments(this.location, this.archive);
  }

  walk(opts: { onEvent?: (e: StoredEvent) => void; onProgress?: (p: ScanProgress) => void } = {}): Promise<LogWalk> {
    let records = 0;
    const onEvent = (e: StoredEvent): void => {
      records++;
      opts.onEvent?.(e);
    };
    try {
      const r = scanLog(this.location, { fromSeq: 1, onProgress: opts.onProgress, onEvent, archive: this.archive });
      return Promise.resolve({ lastSeq: r.lastSeq, lastHash: r.lastHash, records, tornTailBytes: r.torn?.bytes ?? 0, cut: r.cut });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** A torn last line is not a record and is left out. */
  async *pages(): AsyncIterable<string[]> {
    for (const seg of liveSegments(this.location)) yield* linePages(path.join(this.location, seg.file));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

export class PgLogSource implements LogSource {
  readonly kind = 'postgres';
  readonly location: string;
  private readonly conn: LazyPgConnection;

  constructor(url: string) {
    this.location = redactPgUrl(url);
    this.conn = new LazyPgConnection(url, 'reader');
  }

  /** The connection, for a caller that reads more (tail). */
  connection(): Promise<PgClient> {
    return this.conn.get();
  }

  async containers(): Promise<number> {
    const c = await this.connection();
    if ((await schemaVersion(c)) === 0) return 0;
    const r = await c.query<{ n: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${TABLE.events}) AS n`);
    return r.rows[0].n ? 1 : 0;
  }

  async walk(opts: { onEvent?: (e: StoredEvent) => void; onProgress?: (p: ScanProgress) => void } = {}): Promise<LogWalk> {
    const c = await this.connection();
    if ((await schemaVersion(c)) === 0) return { lastSeq: 0, lastHash: new ChainWalker({ fromSeq: 1 }).lastHash, records: 0, tornTailBytes: 0 };
    const r = await walkPgLog(c, { fromSeq: 1, onEvent: opts.onEvent, onProgress: opts.onProgress });
    return { ...r, tornTailBytes: 0 };
  }

  async *pages(): AsyncIterable<string[]> {
    const c = await this.connection();
    if ((await schemaVersion(c)) === 0) return;
    const top = await c.query<{ lo: string | null; hi: string | null }>(`SELECT min(seq) AS lo, max(seq) AS hi FROM ${TABLE.events}`);
    const hi = Number(top.rows[0].hi ?? 0);
    // A pruned log starts at its cut's next seq (its log.pruned record travels with it).
    for (let from = Number(top.rows[0].lo ?? 1); from <= hi;) {
      const r = await c.query<PgRow>(pageQuery(from, hi));
      // A gap yields a short page (the walker that reads them names it); past it, the next range.
      if (r.rows.length) yield r.rows.map((row) => row.record);
      from = r.rows.length ? Number(r.rows[r.rows.length - 1].seq) + 1 : from + 5000;
    }
  }

  close(): Promise<void> {
    return this.conn.close();
  }
}

/** One JSON-lines file of records from seq 1 (what `svc relay events export --to FILE` writes). */
export class JsonlLogSource implements LogSource {
  readonly kind = 'file';
  constructor(readonly location: string) {}

  containers(): Promise<number> {
    return Promise.resolve(1);
  }

  walk(opts: { onEvent?: (e: StoredEvent) => void; onProgress?: (p: ScanProgress) => void } = {}): Promise<LogWalk> {
    const name = path.basename(this.location);
    let records = 0;
    const walker = new ChainWalker(
      {
        fromSeq: 1,
        onEvent: (e) => {
          records++;
          opts.onEvent?.(e);
        },
      },
      'head',
    );
    try {
      const total = opts.onProgress ? fs.statSync(this.location).size : 0;
      const { tail } = scanLines(
        this.location,
        (l) => walker.record(l, name),
        opts.onProgress && ((read) => opts.onProgress!({ done: read, total, seq: walker.lastSeq })),
      );
      if (tail.length > 0) throw new ChainError(walker.next, name, 'unterminated last record (the file was cut short)');
      walker.finish();
      return Promise.resolve({ lastSeq: walker.lastSeq, lastHash: walker.lastHash, records, tornTailBytes: 0, cut: walker.startCut ?? undefined });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  pages(): AsyncIterable<string[]> {
    return linePages(this.location);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Complete lines of a file, 5000 at a time, streamed (a partial last line is left out). */
async function* linePages(file: string): AsyncIterable<string[]> {
  // A utf8 stream decodes a character split across two chunks whole.
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20, encoding: 'utf8' });
  let carry = '';
  let page: string[] = [];
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = carry + chunk;
    const parts = text.split('\n');
    carry = parts.pop()!;
    for (const p of parts) {
      page.push(p);
      if (page.length >= 5000) {
        yield page;
        page = [];
      }
    }
  }
  if (page.length) yield page;
}

/** A database URL, a log directory (the events directory itself), or one JSON-lines export file. */
export function openLogSource(location: string): LogSource {
  if (/^postgres(ql)?:\/\//i.test(location)) return new PgLogSource(location);
  if (fs.existsSync(location) && fs.statSync(location).isFile()) return new JsonlLogSource(location);
  return new FileLogSource(location);
}

/** Whether a directory holds no log yet (no segments), so a copy may be written into it. */
export function fileLogIsEmpty(dir: string): boolean {
  return !fs.existsSync(dir) || listSegments(dir).length === 0;
}

const SEQ_RE = /^\{"seq":(\d+),/;

/** The record of `seq` exactly as stored (the file's line without its newline, or the database's `record`), or null. */
export async function recordText(source: LogSource, seq: number): Promise<string | null> {
  if (source instanceof PgLogSource) {
    if ((await source.containers()) === 0) return null;
    const c = await source.connection();
    const r = await c.query<{ record: string }>(`SELECT record FROM ${TABLE.events} WHERE seq = $1`, [seq]);
    return r.rows[0]?.record ?? null;
  }
  if (source instanceof FileLogSource) {
    // The segment that starts at or before seq (names say where each starts; one of an older relay could be
    // named past its first record, so the one before it is read too), the archive's included.
    const segs = source.segments().filter((s) => s.firstSeq <= seq);
    for (const seg of segs.slice(-2).reverse()) {
      const found = findLine(path.join(seg.dir, seg.file), seq);
      if (found !== null) return found;
    }
    return null;
  }
  if (source instanceof JsonlLogSource) return findLine(source.location, seq);
  return null;
}

/** The line of a file whose seq is `seq` (only the seq prefix is read until then). */
function findLine(file: string, seq: number): string | null {
  let found: string | null = null;
  const stop = new Error('found');
  try {
    scanLines(file, (text) => {
      if (Number(SEQ_RE.exec(text)?.[1]) === seq) {
        found = text;
        throw stop;
      }
    });
  } catch (err) {
    if (err !== stop) throw err;
  }
  return found;
}
