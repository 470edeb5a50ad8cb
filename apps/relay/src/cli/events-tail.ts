import {
  checkLine,
  closeEventTypes,
  EVENT_FAMILIES,
  listSegments,
  namesAnEventType,
  parseTypeSpecs,
  PgLogSource,
  scanLines,
  typeMatcher,
  type StoredEvent,
} from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { colours, EXIT, line, parseFlags, UsageError, type CliIo } from './io';
import { resolveLogSource } from './log-dir';
import { followPg, tailPg } from './events-pg';

/** `svc relay events tail`: the newest records of the log, filtered by type, and with --follow the ones to come. */

/** A `--type` that names nothing: an empty tail would look like a quiet log, so say so and offer the near names. */
function noSuchType(spec: string): string {
  const near = closeEventTypes(spec);
  return near.length > 0
    ? `--type ${spec}: no event type or family of that name; did you mean ${near.join(', ')}?`
    : `--type ${spec}: no event type or family of that name; families: ${EVENT_FAMILIES.join(', ')}`;
}

const TYPE_RE = /"type":"([^"\\]*)"/;

export async function tailCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags('relay events tail', args, {
    follow: { type: 'boolean', short: 'f' },
    type: { type: 'string', multiple: true },
    limit: { type: 'string', short: 'n' },
    log: { type: 'string' },
    json: { type: 'boolean' },
  });
  const limit = v.limit === undefined ? 20 : Number(v.limit);
  if (!Number.isInteger(limit) || limit < 0) throw new UsageError(`--limit ${v.limit}: a whole number >= 0`, 'relay events tail');
  const unknownType = (parseTypeSpecs(v.type) ?? []).find((spec) => !namesAnEventType(spec));
  if (unknownType !== undefined) throw new UsageError(noSuchType(unknownType), 'relay events tail');
  const source = resolveLogSource(io.env, v.log);
  const matches = typeMatcher(v.type ?? []);
  const print = printer(io, Boolean(v.json));
  if (source instanceof PgLogSource) {
    try {
      const last = await tailPg(source, v.type ?? [], limit, print);
      if (v.follow) await followPg(source, last, io.signal, (type, text) => matches(type) && print(text));
    } finally {
      await source.close();
    }
    return EXIT.ok;
  }
  const dir = source.location;

  // The newest `limit` matching records (all of them with --limit 0), oldest first.
  const ring: string[] = [];
  const pos = { segment: '', offset: 0 };
  // A JSON-lines export is one file (and nothing writes to it: no --follow).
  const exportFile = source.kind === 'file' && fs.statSync(dir).isFile();
  if (exportFile && v.follow) throw new UsageError("--follow: an export file does not grow; follow the relay's log instead", 'relay events tail');
  const files = exportFile ? [{ file: path.basename(dir) }] : listSegments(dir);
  const base = exportFile ? path.dirname(dir) : dir;
  for (const seg of files) {
    const { end } = scanLines(path.join(base, seg.file), (text) => {
      const type = TYPE_RE.exec(text)?.[1];
      if (type === undefined || !matches(type)) return;
      if (limit === 0) return print(text);
      ring.push(text);
      if (ring.length > limit) ring.shift();
    });
    pos.segment = seg.file;
    pos.offset = end;
  }
  for (const text of ring) print(text);
  if (!v.follow) return EXIT.ok;

  await follow(dir, pos, io.signal, (text) => {
    const type = TYPE_RE.exec(text)?.[1];
    if (type !== undefined && matches(type)) print(text);
  });
  return EXIT.ok;
}

function printer(io: CliIo, json: boolean): (text: string) => void {
  const c = colours(io.stdout, io.env);
  return (text) => {
    const check = checkLine(text);
    if (!check.ok) line(io.stderr, `warning: a record fails its checksum (${check.reason}); run "svc relay events verify"`);
    if (json) return line(io.stdout, text);
    let e: StoredEvent;
    try {
      e = JSON.parse(text) as StoredEvent;
    } catch {
      return line(io.stdout, c.red(`(unparseable record) ${text.slice(0, 200)}`));
    }
    line(io.stdout, `${c.dim(`#${e.seq}`)} ${c.dim(e.at)} ${c.cyan(e.type)} ${c.magenta(e.actor)} ${JSON.stringify(shortDigests(e.data))}`);
  };
}

/** Digests are long and mean nothing to a reader; their first 8 characters still correlate records. */
function shortDigests(data: object): object {
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(data)) out[k] = /Digest$/.test(k) && typeof val === 'string' ? val.slice(0, 8) + '…' : val;
  return out;
}

/** Polls the log (woken early by fs.watch) and hands over every complete new line, across segment rotation. */
async function follow(
  dir: string,
  pos: { segment: string; offset: number },
  signal: AbortSignal | undefined,
  onLine: (text: string) => void,
): Promise<void> {
  let wake: (() => void) | null = null;
  let watcher: fs.FSWatcher | null = null;
  try {
    watcher = fs.watch(dir, () => wake?.());
  } catch {
    // polling alone still works
  }
  const stopped = new Promise<void>((resolve) => {
    if (!signal) return;
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  try {
    while (!signal?.aborted) {
      const segments = listSegments(dir);
      if (!pos.segment && segments.length > 0) pos = { segment: segments[0].file, offset: 0 };
      if (pos.segment) {
        const file = path.join(dir, pos.segment);
        const complete = readNew(file, pos, onLine);
        const next = segments.find((s) => s.file > pos.segment);
        if (complete && next) {
          pos = { segment: next.file, offset: 0 };
          continue;
        }
      }
      await Promise.race([stopped, new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, 250)))]);
      wake = null;
    }
  } finally {
    watcher?.close();
  }
}

/** Reads complete lines after `pos.offset`; returns true when nothing partial is left in the file. */
function readNew(file: string, pos: { offset: number }, onLine: (text: string) => void): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return true;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size < pos.offset) pos.offset = size; // a torn tail was cut at restart: it was never a whole line
    if (size === pos.offset) return true;
    const buf = Buffer.alloc(size - pos.offset);
    fs.readSync(fd, buf, 0, buf.length, pos.offset);
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      onLine(buf.toString('utf8', start, nl));
      start = nl + 1;
    }
    pos.offset += start;
    return start === buf.length;
  } finally {
    fs.closeSync(fd);
  }
}
