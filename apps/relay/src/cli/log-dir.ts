import { eventsDir, FileLogSource, isPostgresUrl, JsonlLogSource, listSegments, PgLogSource, type LogSource } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { svcHomeFrom } from '../common/config/config';
import { CliError } from './io';

/**
 * The event log directory a command reads: `--log PATH` (the events directory itself, or a relay or
 * svc home directory holding one), else `<SVC_HOME or ~/.svc>/relay/events`.
 */
export function resolveLogDir(env: NodeJS.ProcessEnv, given: string | undefined): string {
  if (given === undefined) {
    const dir = eventsDir(svcHomeFrom(env));
    if (!fs.existsSync(dir)) throw new CliError(`no event log at ${dir} (the relay has not run with this SVC_HOME; give --log PATH)`);
    return dir;
  }
  const base = path.resolve(given);
  if (!fs.existsSync(base)) throw new CliError(`--log ${given}: no such directory`);
  if (!fs.statSync(base).isDirectory())
    throw new CliError(`--log ${given}: give the event log directory (the one holding segment-*.jsonl files), not a file`);
  for (const dir of [base, path.join(base, 'events'), path.join(base, 'relay', 'events')]) {
    if (fs.existsSync(dir) && listSegments(dir).length > 0) return dir;
  }
  throw new CliError(`--log ${given}: no event log segments (segment-*.jsonl) there`);
}

/**
 * The log a command reads: `--log` (a postgres:// URL, a log directory as above, or one JSON-lines
 * export file), else the relay's own store: RELAY_EVENT_STORE's database when it names one, else the
 * file log under SVC_HOME.
 */
export function resolveLogSource(env: NodeJS.ProcessEnv, given: string | undefined, archive?: string): LogSource {
  if (archive !== undefined) {
    // The segments a prune moved away, walked first as one chain with the live log.
    const dir = path.resolve(archive);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new CliError(`--archive ${archive}: no such directory`);
    if (isPostgresUrl(given) || (given === undefined && isPostgresUrl(env.RELAY_EVENT_STORE)))
      throw new CliError('--archive goes with a file log: a PostgreSQL log is not pruned');
    return new FileLogSource(resolveLogDir(env, given), dir);
  }
  if (isPostgresUrl(given)) return new PgLogSource(given.trim());
  if (given === undefined && isPostgresUrl(env.RELAY_EVENT_STORE)) return new PgLogSource(env.RELAY_EVENT_STORE.trim());
  if (given !== undefined && fs.existsSync(given) && fs.statSync(given).isFile()) {
    if (!/\.jsonl$/i.test(given)) throw new CliError(`--log ${given}: give the event log directory, a .jsonl export, or a postgres:// URL`);
    return new JsonlLogSource(path.resolve(given));
  }
  return new FileLogSource(resolveLogDir(env, given));
}
