import { acquireLogLock, LogLockedError, plural } from '@svc/events';
import * as path from 'node:path';
import { loadConfig, relayDir } from '../common/config/config';
import { pruneLog, type PruneCut, type PruneReport } from '../log-retention/log-prune';
import { openKeyStore } from '../personal/open-key-store';
import { openOfflineLoop } from './offline-loop';
import { CliError, EXIT, line, parseFlags, UsageError, type CliIo } from './io';

const COMMAND = 'relay events prune';
const ISO_RE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** `--before` as a time (ISO) or a seq (a whole number). */
export function parseCut(text: string): PruneCut {
  if (/^\d+$/.test(text)) {
    const seq = Number(text);
    if (!Number.isSafeInteger(seq) || seq < 2) throw new UsageError(`--before ${text}: a seq is a whole number from 2 on`, COMMAND);
    return { beforeSeq: seq };
  }
  const ms = ISO_RE.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--before ${text}: give a time like 2026-03-01T00:00:00Z or a seq like 120000`, COMMAND);
  return { before: new Date(ms) };
}

/**
 * `svc relay events prune --before TIME|SEQ [--archive DIR] [--yes] [--json]`: drops (or archives) the
 * whole segments of the home's file log (or the rows of its PostgreSQL log) before the cut, on a stopped relay's home (a running relay holds
 * it and is refused: RELAY_LOG_RETENTION_DAYS prunes inside it). Without --yes it only says what would go.
 */
export async function pruneCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags(COMMAND, args, {
    before: { type: 'string' },
    archive: { type: 'string' },
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (v.before === undefined) throw new UsageError('say where to cut: --before TIME or --before SEQ', COMMAND);
  const cut = parseCut(v.before);
  const config = loadConfig(io.env);
  const dir = path.join(relayDir(config), 'events');
  const archive = v.archive === undefined ? null : path.resolve(v.archive);
  if (archive !== null && path.resolve(archive) === path.resolve(dir))
    throw new UsageError('--archive must not be the events directory itself', COMMAND);
  let lock;
  try {
    lock = acquireLogLock(relayDir(config), 'relay home');
  } catch (err) {
    if (err instanceof LogLockedError)
      throw new CliError(
        `${err.message}\nstop that relay first, or let it prune itself: RELAY_LOG_RETENTION_DAYS (and RELAY_LOG_ARCHIVE_DIR) prune inside the running relay`,
      );
    throw err;
  }
  let report: PruneReport;
  const keys = await openKeyStore(config);
  try {
    const loop = await openOfflineLoop(config, keys);
    try {
      report = await pruneLog(loop, {
        svcHome: config.svcHome,
        dir,
        pgUrl: config.eventStoreUrl,
        cut,
        archive,
        by: 'operator',
        dryRun: !v.yes,
        now: new Date(),
      });
    } finally {
      await loop.close();
    }
  } finally {
    await keys.close();
    lock.release();
  }
  if (v.json) line(io.stdout, JSON.stringify(report, null, 2));
  else printReport(io, report);
  return EXIT.ok;
}

function printReport(io: CliIo, r: PruneReport): void {
  if (!r.cut) {
    line(
      io.stdout,
      r.store === 'postgres'
        ? `nothing to prune: no record lies before the cut (records after seq ${r.snapshot_seq}, the latest snapshot, stay)`
        : `nothing to prune: no whole segment lies before the cut (the segment being written and records after seq ${r.snapshot_seq} stay)`,
    );
    return;
  }
  const rows = r.store === 'postgres';
  const what = rows
    ? `${plural(r.records, 'record')} (${r.bytes} bytes of rows) up to seq ${r.cut.seq} of ${r.cut.at}`
    : `${plural(r.segments.length, 'segment')} (${plural(r.records, 'record')}, ${r.bytes} bytes) up to seq ${r.cut.seq} of ${r.cut.at}`;
  const where = r.archive === null ? 'deleted' : rows ? `written to ${r.archive} as a segment file and deleted` : `moved to ${r.archive}`;
  if (r.dry_run) {
    line(io.stdout, `would prune ${what}: ${where}; the log would start at seq ${r.cut.seq + 1}. Add --yes to prune`);
    return;
  }
  line(io.stdout, `pruned ${what}: ${where}; the log starts at seq ${r.cut.seq + 1}`);
  line(io.stdout, `the cut is recorded at seq ${r.recorded_at} (log.pruned); its checkpoint, signed with the relay's key: ${r.checkpoint}`);
}
