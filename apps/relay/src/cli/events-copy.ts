import {
  ChainError,
  copyLog,
  CopyRefusedError,
  eventsDir,
  isPostgresUrl,
  LogLockedError,
  openLogSource,
  PgConnectError,
  PgLogLockedError,
  plural,
  SchemaTooNewError,
  type LogSource,
  type LogTarget,
} from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { svcHomeFrom } from '../common/config/config';
import { CliError, colours, EXIT, line, parseFlags, parseFlagsAndPositionals, progressLine, UsageError, type CliIo } from './io';
import { resolveLogDir, resolveLogSource } from './log-dir';

/** `--to`: a database URL; a directory (existing, or written with a trailing slash) for a file-store log; else one JSON-lines file. */
function targetOf(to: string): LogTarget {
  if (isPostgresUrl(to as string | undefined)) return { kind: 'postgres', url: to.trim() };
  const full = path.resolve(to);
  if (to.endsWith('/') || to.endsWith(path.sep) || (fs.existsSync(full) && fs.statSync(full).isDirectory())) return { kind: 'dir', dir: full };
  return { kind: 'jsonl', file: full };
}

async function runCopy(source: LogSource, target: LogTarget, io: CliIo, verb: 'exported' | 'imported', json: boolean): Promise<number> {
  const progress = progressLine(io.stderr, verb === 'exported' ? 'exporting' : 'importing');
  let report;
  try {
    report = await copyLog(source, target, progress.update);
  } catch (err) {
    if (err instanceof ChainError) {
      throw new CliError(
        `the log is broken at seq ${err.seq} (${err.segment}): ${err.reason}\nnothing was ${verb}: a copy is proven record by record, and this one could not be`,
      );
    }
    if (err instanceof LogLockedError || err instanceof PgLogLockedError) {
      throw new CliError(`${err.message}\na relay is writing the target: stop it first, a copy goes only into a store no relay uses`);
    }
    if (err instanceof CopyRefusedError || err instanceof PgConnectError || err instanceof SchemaTooNewError) throw new CliError(err.message);
    throw err;
  } finally {
    progress.done();
    await source.close();
  }
  if (json) {
    line(
      io.stdout,
      JSON.stringify(
        { ok: true, from: source.location, to: report.target, records: report.records, lastSeq: report.lastSeq, lastHash: report.lastHash },
        null,
        2,
      ),
    );
    return EXIT.ok;
  }
  const c = colours(io.stdout, io.env);
  line(io.stdout, `${c.green('ok')}  ${verb} ${plural(report.records, 'record')} from ${source.location} to ${report.target}`);
  line(io.stdout, `    chain proven on the way and again on arrival: last seq ${report.lastSeq}, last hash ${report.lastHash}`);
  return EXIT.ok;
}

/** Refuses a copy of a log onto itself (it would find the target full, but say why). */
function refuseSame(source: LogSource, target: LogTarget): void {
  const t = target.kind === 'postgres' ? openLogSource(target.url).location : target.kind === 'dir' ? target.dir : target.file;
  if (t === source.location) throw new CliError(`the source and the target are the same log (${t})`);
}

/** `svc relay events export [--log SOURCE] [--to FILE|DIR|postgres://...]`: a copy of the relay's log (stdout without --to). */
export async function exportCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags('relay events export', args, { log: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' } });
  const source = resolveLogSource(io.env, v.log);
  if (v.to === undefined) {
    // To stdout: each record proven as it goes out; a broken one stops the stream and says where.
    const { ChainWalker } = await import('@svc/events');
    const walker = new ChainWalker({ fromSeq: 1 }, 'head');
    try {
      for await (const page of source.pages()) {
        for (const r of page) walker.record(r, source.location);
        if (page.length) io.stdout.write(page.join('\n') + '\n');
      }
      walker.finish();
    } catch (err) {
      if (err instanceof ChainError) throw new CliError(`the log is broken at seq ${err.seq}: ${err.reason}; the export stops before it`);
      throw err;
    } finally {
      await source.close();
    }
    return EXIT.ok;
  }
  const target = targetOf(v.to);
  refuseSame(source, target);
  return runCopy(source, target, io, 'exported', Boolean(v.json));
}

/**
 * `svc relay events import SOURCE [--into DIR|postgres://...]`: SOURCE (a .jsonl export, a log directory,
 * or a database) into an empty store, the relay's own by default (RELAY_EVENT_STORE, else the file log).
 */
export async function importCommand(args: string[], io: CliIo): Promise<number> {
  const { values: v, positionals } = parseFlagsAndPositionals('relay events import', args, { into: { type: 'string' }, json: { type: 'boolean' } });
  const from = positionals[0];
  if (!from || positionals.length > 1)
    throw new UsageError('give one source: a .jsonl export, a log directory, or a postgres:// URL', 'relay events import');
  let source: LogSource;
  if (isPostgresUrl(from)) source = openLogSource(from.trim());
  else if (fs.existsSync(from) && fs.statSync(from).isFile()) source = openLogSource(path.resolve(from));
  else source = openLogSource(resolveLogDir(io.env, from));
  const into = v.into ?? (isPostgresUrl(io.env.RELAY_EVENT_STORE) ? io.env.RELAY_EVENT_STORE : undefined);
  const target: LogTarget =
    into === undefined
      ? { kind: 'dir', dir: eventsDir(svcHomeFrom(io.env)) }
      : isPostgresUrl(into)
        ? { kind: 'postgres', url: into.trim() }
        : { kind: 'dir', dir: path.resolve(into) };
  refuseSame(source, target);
  return runCopy(source, target, io, 'imported', Boolean(v.json));
}
