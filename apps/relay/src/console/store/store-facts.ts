import type { StoreSegment, StoreSnapshot } from '@svc/console-api';
import { epoch } from '@svc/domain';
import { listSegments, TABLE, type PgLogSource } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shellQuote } from '../../cli/self-command';

const SNAP_RE = /^snapshot-(\d{12})\.json$/;
/** A snapshot file's `at` sits in its first bytes (in the clear before the encrypted body): no need to read MiBs. */
const HEAD = 512;
const MAX_SEGMENTS = 50;

/** The file log's segments, newest first (at most 50), with their sizes. */
export function segmentsOf(eventsDir: string): StoreSegment[] {
  return listSegments(eventsDir)
    .slice(-MAX_SEGMENTS)
    .reverse()
    .map((s) => ({ file: s.file, first_seq: s.firstSeq, bytes: sizeOf(path.join(eventsDir, s.file)) }));
}

/** The snapshot files beside the file log, newest first; `at` read from the snapshot itself (the relay's clock). */
export function fileSnapshots(dir: string): StoreSnapshot[] {
  let files: string[];
  try {
    files = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return files
    .map((f) => ({ f, m: SNAP_RE.exec(f) }))
    .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null)
    .sort((a, b) => b.f.localeCompare(a.f))
    .map(({ f, m }) => ({ seq: Number(m[1]), at: atOf(readHead(path.join(dir, f)).replace(/\\"/g, '"')), bytes: sizeOf(path.join(dir, f)) }));
}

/** The snapshots in the database beside the log, newest first. */
export async function pgSnapshots(source: PgLogSource): Promise<StoreSnapshot[]> {
  const c = await source.connection();
  const exists = await c.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [TABLE.snapshots]);
  if (exists.rows[0]?.t === null) return [];
  // `at`: the relay's clock when it wrote the snapshot (the body is encrypted).
  const r = await c.query<{ seq: string; bytes: string; at: Date }>(
    `SELECT seq, octet_length(body) AS bytes, at FROM ${TABLE.snapshots} ORDER BY seq DESC LIMIT 10`,
  );
  return r.rows.map((row) => ({ seq: Number(row.seq), at: epoch(row.at.getTime()), bytes: Number(row.bytes) }));
}

/** The shell commands that export, verify and replay this log; `cli` runs the relay's own CLI as written (runnableSvc). */
export function storeCommands(store: 'file' | 'postgres', eventsDir: string, cli: string): Array<{ label: string; command: string }> {
  // A database URL carries its password: the CLI reads it from RELAY_EVENT_STORE, as the relay does.
  const log = store === 'file' ? ` --log ${shellQuote(eventsDir)}` : '';
  const where = store === 'file' ? '' : ' (with RELAY_EVENT_STORE set as for the relay)';
  return [
    { label: `Export a copy, every record proven on the way${where}`, command: `${cli} relay events export${log} --to svc-events.jsonl` },
    { label: `Verify the whole chain from a shell${where}`, command: `${cli} relay events verify${log}` },
    { label: `Rebuild the state from the log and print a summary${where}`, command: `${cli} relay events replay${log}` },
  ];
}

function atOf(head: string): number | null {
  const iso = /"at":"([^"]{1,40})"/.exec(head)?.[1];
  const ms = iso === undefined ? NaN : Date.parse(iso);
  return Number.isNaN(ms) ? null : epoch(ms);
}

function readHead(file: string): string {
  let fd: number | null = null;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(HEAD);
    return buf.toString('utf8', 0, fs.readSync(fd, buf, 0, HEAD, 0));
  } catch {
    return '';
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
