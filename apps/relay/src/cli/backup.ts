import {
  ChainError,
  CopyRefusedError,
  isPostgresUrl,
  LogLockedError,
  PgConnectError,
  PgLogLockedError,
  plural,
  SchemaTooNewError,
} from '@svc/events';
import * as path from 'node:path';
import { ManifestError } from '../backup/backup-manifest';
import { backupHome, BackupRefusedError } from '../backup/home-backup';
import { restoreHome, RestoreRefusedError } from '../backup/home-restore';
import { TarError } from '../backup/ustar';
import { svcHomeFrom } from '../common/config/config';
import { CliError, colours, EXIT, line, parseFlags, parseFlagsAndPositionals, progressLine, UsageError, type CliIo } from './io';

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** `--home DIR`, else SVC_HOME (else ~/.svc): the same home every relay command uses. */
function homeOf(io: CliIo, given: string | undefined): string {
  return given !== undefined ? path.resolve(given) : svcHomeFrom(io.env);
}

/** The failures an operator can act on, as one sentence each (anything else is a bug and keeps its stack). */
function plainly(err: unknown): never {
  if (err instanceof ChainError) throw new CliError(`the log is broken at seq ${err.seq} (${err.segment}): ${err.reason}`);
  if (err instanceof TarError || err instanceof ManifestError) throw new CliError(`refused: ${err.message}`);
  if (err instanceof LogLockedError || err instanceof PgLogLockedError) {
    throw new CliError(`${err.message}: a relay uses it; stop that relay first`);
  }
  if (
    err instanceof BackupRefusedError ||
    err instanceof RestoreRefusedError ||
    err instanceof CopyRefusedError ||
    err instanceof PgConnectError ||
    err instanceof SchemaTooNewError
  ) {
    throw new CliError(err.message);
  }
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EACCES' || code === 'ENOSPC' || code === 'EROFS' || code === 'ENOENT') throw new CliError((err as Error).message);
  throw err;
}

/** `svc relay backup --out FILE [--home DIR] [--json]`: a consistent copy of a running relay's home. */
export async function backupCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags('relay backup', args, { out: { type: 'string' }, home: { type: 'string' }, json: { type: 'boolean' } });
  if (!v.out) throw new UsageError('give --out FILE: where the backup goes', 'relay backup');
  const storeUrl = isPostgresUrl(io.env.RELAY_EVENT_STORE) ? io.env.RELAY_EVENT_STORE.trim() : undefined;
  const progress = progressLine(io.stderr, 'backing up');
  let report;
  try {
    report = await backupHome({
      home: homeOf(io, v.home),
      storeUrl,
      out: path.resolve(v.out),
      onProgress: (p) => progress.update({ done: p.bytes, total: p.totalBytes, seq: p.records }),
    });
  } catch (err) {
    plainly(err);
  } finally {
    progress.done();
  }
  if (v.json) {
    line(io.stdout, JSON.stringify({ ok: true, ...report }, null, 2));
    return EXIT.ok;
  }
  const c = colours(io.stdout, io.env);
  line(
    io.stdout,
    `${c.green('ok')}  backed up ${report.store === 'postgres' ? 'the database log' : 'the log'} to seq ${report.head.seq} and the home to ${report.out}`,
  );
  line(
    io.stdout,
    `    ${plural(report.records, 'record')}, ${plural(report.files, 'file')}, ${mib(report.bytes)}; head hash ${report.head.hash}; snapshot ${report.snapshotSeq === null ? 'none' : `at seq ${report.snapshotSeq}`}`,
  );
  if (report.links.length) line(io.stdout, `    not followed (symbolic links): ${report.links.join(', ')}`);
  line(io.stdout, "    the file holds the relay's keys and secrets (mode 0600): keep it as you keep the home");
  return EXIT.ok;
}

/** `svc relay restore FILE [--home DIR] [--to postgres://...] [--force] [--json]`: a backup laid out as a home. */
export async function restoreCommand(args: string[], io: CliIo): Promise<number> {
  const { values: v, positionals } = parseFlagsAndPositionals('relay restore', args, {
    home: { type: 'string' },
    to: { type: 'string' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (positionals.length !== 1) throw new UsageError('give one backup file', 'relay restore');
  if (v.to !== undefined && !isPostgresUrl(v.to))
    throw new UsageError('--to takes a postgres:// URL (without it the log goes into the home)', 'relay restore');
  const progress = progressLine(io.stderr, 'restoring');
  let report;
  try {
    report = await restoreHome({
      archive: path.resolve(positionals[0]),
      home: homeOf(io, v.home),
      toUrl: v.to?.trim(),
      force: Boolean(v.force),
      onProgress: (p) => progress.update({ done: p.bytes, total: p.totalBytes, seq: 0 }),
    });
  } catch (err) {
    plainly(err);
  } finally {
    progress.done();
  }
  if (v.json) {
    line(io.stdout, JSON.stringify({ ok: true, ...report }, null, 2));
    return EXIT.ok;
  }
  const c = colours(io.stdout, io.env);
  line(io.stdout, `${c.green('ok')}  restored ${plural(report.files, 'file')} (${mib(report.bytes)}) into ${report.home}`);
  line(io.stdout, `    every file matched the manifest; the log is proven to seq ${report.head.seq} (hash ${report.head.hash}) in ${report.log}`);
  if (report.setAside) line(io.stdout, `    the home's previous relay files are in ${report.setAside}`);
  const store = v.to ? 'RELAY_EVENT_STORE=<that database> ' : '';
  line(io.stdout, `    start it: ${store}SVC_HOME=${report.home} svc relay start   (the backup was made by relay ${report.relayVersion})`);
  return EXIT.ok;
}
