import {
  ChainError,
  ChainWalker,
  connectPg,
  isUndefinedTable,
  listSegments,
  pageQuery,
  redactPgUrl,
  segmentName,
  TABLE,
  type PgClient,
  type PgRow,
} from '@svc/events';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KEY_TABLE, KeyWrapError, unwrapRows } from '../personal/pg-key-store';
import { kekPath, loadKek } from '../standby/shared-secrets';
import { fdChunks } from './ustar';

/** A file the archive will hold, with its exact size and its bytes to come. */
export type Part = { rel: string; size: number; chunks: () => Iterable<Buffer> | AsyncIterable<Buffer>; close?: () => void };

export type LogParts = {
  head: { seq: number; hash: string };
  /** The log's records as file segments, each proven by the chain walk as it is written. */
  segments: Part[];
  /** Called after the copy: the store's other state (data keys, the snapshot), read only once the log is taken. */
  after: () => Promise<{ keys: Part | null; snapshot: (Part & { seq: number }) | null }>;
  close: () => Promise<void>;
};

export class BackupRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupRefusedError';
  }
}

/**
 * Splits chunks into lines for the chain walk. A record never spans two segments, and every segment is cut
 * at a record's end, so nothing is left over at a segment's end.
 */
function proven(chunks: Iterable<Buffer>, walker: ChainWalker, where: string, onRecord: () => void): Iterable<Buffer> {
  return (function* () {
    let carry = Buffer.alloc(0);
    for (const chunk of chunks) {
      const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
      let start = 0;
      for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
        walker.record(buf.toString('utf8', start, nl), where);
        onRecord();
        start = nl + 1;
      }
      carry = Buffer.from(buf.subarray(start));
      yield chunk;
    }
    if (carry.length) throw new ChainError(walker.next, where, 'unterminated record inside the log');
  })();
}

/** The byte after the last newline within the first `size` bytes of a file (0 when there is none). */
function lastRecordEnd(fd: number, size: number): number {
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (let end = size; end > 0;) {
    const start = Math.max(0, end - buf.length);
    const n = fs.readSync(fd, buf, 0, end - start, start);
    const nl = buf.subarray(0, n).lastIndexOf(10);
    if (nl !== -1) return start + nl + 1;
    end = start;
  }
  return 0;
}

/**
 * The file log up to a seq known to be durable, read beside a running relay without its lock: every
 * segment is opened first (so one removed meanwhile is still read whole), synced (what a write put in the
 * page cache is on disk before it counts), then cut at the last whole record within the size seen then.
 * What the relay appends after that is not in the backup.
 */
export function fileLogParts(relayDir: string, onRecord: () => void): LogParts {
  const dir = path.join(relayDir, 'events');
  const segs = listSegments(dir);
  if (segs.length === 0) throw new BackupRefusedError(`no event log at ${dir}: nothing to back up (has a relay run with this home?)`);
  const open = segs.map((s) => {
    const fd = fs.openSync(path.join(dir, s.file), 'r');
    fs.fdatasyncSync(fd);
    return { ...s, fd, size: fs.fstatSync(fd).size };
  });
  const walker = new ChainWalker({ fromSeq: segs[0].firstSeq }, segs[0].firstSeq);
  const segments: Part[] = open.map((s, i) => {
    const cut = lastRecordEnd(s.fd, s.size);
    if (i < open.length - 1 && cut !== s.size) {
      throw new BackupRefusedError(`the event log is broken: ${s.file} ends inside a record, and it is not the last segment`);
    }
    return { rel: `relay/events/${s.file}`, size: cut, chunks: () => proven(fdChunks(s.fd, cut), walker, s.file, onRecord) };
  });
  const closeAll = (): Promise<void> => {
    for (const s of open) fs.closeSync(s.fd);
    return Promise.resolve();
  };
  return {
    get head() {
      return { seq: walker.lastSeq, hash: walker.lastHash };
    },
    segments,
    after: () => Promise.resolve({ keys: null, snapshot: fileSnapshot(path.join(relayDir, 'snapshots'), walker.lastSeq) }),
    close: closeAll,
  };
}

/** The newest snapshot file at or before `headSeq` (a snapshot is written whole and renamed: a file seen is complete). */
function fileSnapshot(dir: string, headSeq: number): (Part & { seq: number }) | null {
  const names = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  const seqs = names
    .map((n) => /^snapshot-(\d{12})\.json$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .filter((seq) => seq <= headSeq)
    .sort((a, b) => b - a);
  for (const seq of seqs) {
    const file = path.join(dir, `snapshot-${String(seq).padStart(12, '0')}.json`);
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      continue; // replaced by a newer one meanwhile
    }
    const size = fs.fstatSync(fd).size;
    return { seq, rel: `relay/snapshots/${path.basename(file)}`, size, chunks: () => fdChunks(fd, size), close: () => fs.closeSync(fd) };
  }
  return null;
}

/**
 * The database log up to its highest committed seq when the backup starts (a batch commits whole and seqs
 * come from one writer, so every seq up to it is there), as one segment; then the data keys and the newest
 * snapshot not past it, in the file store's formats (the same sealed bodies under the same MAC). The data
 * keys are unsealed with the home's KEK (`relayDir`), as the file store keeps them: the archive holds the
 * KEK and secret.key beside them anyway, and a restore seals them again under the KEK it restores.
 */
export async function pgLogParts(url: string, relayDir: string, onRecord: () => void): Promise<LogParts> {
  const client = await connectPg(url, 'reader');
  client.on('error', () => undefined);
  try {
    const top = await client.query<{ hi: string | null }>(`SELECT max(seq) AS hi FROM ${TABLE.events}`).catch((err: unknown) => {
      if (isUndefinedTable(err)) return { rows: [{ hi: null }] };
      throw err;
    });
    const hi = Number(top.rows[0]?.hi ?? 0);
    if (hi === 0) throw new BackupRefusedError(`no event log in ${redactPgUrl(url)}: nothing to back up`);
    // Rows past the head may commit while this runs: the size is of the rows up to it.
    const sized = await client.query<{ bytes: string }>(`SELECT sum(octet_length(record) + 1) AS bytes FROM ${TABLE.events} WHERE seq <= $1`, [hi]);
    const walker = new ChainWalker({ fromSeq: 1 });
    const pages = async function* (): AsyncIterable<Buffer> {
      for (let from = 1; from <= hi;) {
        const rows = (await client.query<PgRow>(pageQuery(from, hi))).rows;
        if (rows.length === 0) throw new ChainError(walker.next, TABLE.events, `expected seq ${walker.next}: the log ends at seq ${walker.lastSeq}`);
        for (const row of rows) {
          walker.record(row.record, TABLE.events);
          onRecord();
        }
        from = Number(rows[rows.length - 1].seq) + 1;
        yield Buffer.from(rows.map((r) => r.record + '\n').join(''), 'utf8');
      }
    };
    return {
      get head() {
        return { seq: walker.lastSeq, hash: walker.lastHash };
      },
      segments: [{ rel: `relay/events/${segmentName(1)}`, size: Number(sized.rows[0].bytes), chunks: pages }],
      after: async () => ({ keys: await pgKeys(client, relayDir), snapshot: await pgSnapshot(client, walker.lastSeq) }),
      close: () => client.end().catch(() => undefined),
    };
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

function bufferPart(rel: string, text: string): Part {
  const buf = Buffer.from(text, 'utf8');
  return { rel, size: buf.length, chunks: () => [buf] };
}

/** The data keys as the file store keeps them (personal-keys.json), unsealed with the home's KEK. */
async function pgKeys(client: PgClient, relayDir: string): Promise<Part | null> {
  let rows: Array<{ id: string; key: Buffer }>;
  try {
    rows = (await client.query<{ id: string; key: Buffer }>(`SELECT id, key FROM ${KEY_TABLE} ORDER BY id`)).rows;
  } catch (err) {
    if (isUndefinedTable(err)) return null;
    throw err;
  }
  // A home without a KEK opens no sealed row: a random key says so with the same message as a wrong one.
  const kek = loadKek(relayDir, false);
  let opened: Map<string, Buffer>;
  try {
    opened = unwrapRows(kek ?? randomBytes(32), rows, kek ? kekPath(relayDir) : `${kekPath(relayDir)} (missing)`).keys;
  } catch (err) {
    if (err instanceof KeyWrapError) throw new BackupRefusedError(err.message);
    throw err;
  }
  const keys: Record<string, string> = {};
  for (const [id, key] of [...opened].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) keys[id] = key.toString('base64');
  return bufferPart('relay/personal-keys.json', JSON.stringify({ v: 1, keys }) + '\n');
}

async function pgSnapshot(client: PgClient, headSeq: number): Promise<(Part & { seq: number }) | null> {
  const r = await client.query<{ seq: string; at: Date; body: string; mac: string }>(
    `SELECT seq, at, body, mac FROM ${TABLE.snapshots} WHERE seq <= $1 ORDER BY seq DESC LIMIT 1`,
    [headSeq],
  );
  const row = r.rows[0];
  if (!row) return null;
  const seq = Number(row.seq);
  const text = JSON.stringify({ at: new Date(row.at).toISOString(), body: row.body, mac: row.mac });
  return { seq, ...bufferPart(`relay/snapshots/snapshot-${String(seq).padStart(12, '0')}.json`, text) };
}
