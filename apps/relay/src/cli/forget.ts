import type { ForgetAnswer } from '@svc/console-api';
import { DomainError } from '@svc/domain';
import { acquireLogLock, LogLockedError, plural, type HeldLock } from '@svc/events';
import { loadConfig, relayDir } from '../common/config/config';
import { type RelayConfig } from '../common/config/relay-config';
import { checkBefore, checkDevice, forgetEvents, keysToForget, type ForgetRequest } from '../personal/forget';
import { openKeyStore } from '../personal/open-key-store';
import { openOfflineLoop } from './offline-loop';
import { CliError, EXIT, line, parseFlags, UsageError, type CliIo } from './io';
import { relayEndpoint, relayRefused, relayUnreachable, requestJson } from './relay-client';

const COMMAND = 'relay events forget';

type Outcome = ForgetAnswer & { via: 'relay' | 'files' };

/**
 * `svc relay events forget --device PREFIX | --before TIME [--yes]`: destroys the data keys of personal
 * content (notification text, Thread messages and replies), through the relay running on this machine
 * (its loopback console API), or on the home's files and database when none runs. Without --yes it only
 * says how many keys would go.
 */
export async function forgetCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseFlags(COMMAND, args, {
    device: { type: 'string' },
    before: { type: 'string' },
    yes: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.device === undefined && values.before === undefined)
    throw new UsageError('say what to forget: --device PREFIX, --before TIME, or both', COMMAND);
  let req: ForgetRequest;
  try {
    req = {
      scope: values.device !== undefined ? 'device' : 'before',
      device: values.device !== undefined ? checkDevice(values.device) : null,
      before: values.before !== undefined ? checkBefore(values.before) : null,
    };
  } catch (err) {
    if (err instanceof DomainError) throw new UsageError(err.message, COMMAND);
    throw err;
  }
  const dryRun = !values.yes;
  const outcome = (await throughRelay(io, req, dryRun)) ?? (await onFiles(io, req, dryRun));
  if (values.json) line(io.stdout, JSON.stringify(outcome));
  else if (dryRun)
    line(
      io.stdout,
      outcome.keys === 0
        ? 'nothing to forget: no data key matches'
        : `would forget the content sealed under ${plural(outcome.keys, 'data key')} (${outcome.via === 'relay' ? 'the running relay' : 'the home, no relay runs'}); add --yes to forget it`,
    );
  else if (outcome.keys === 0) line(io.stdout, 'nothing to forget: no data key matches');
  else line(io.stdout, `forgot the content sealed under ${plural(outcome.keys, 'data key')} (event #${outcome.seq}); the rest of each event stays`);
  return EXIT.ok;
}

/**
 * The running relay's answer, or null when none runs: the relay that holds this home (found by its lock,
 * on any port) is always asked; without one, whatever answers at RELAY_HOST/RELAY_PORT.
 */
async function throughRelay(io: CliIo, req: ForgetRequest, dryRun: boolean): Promise<Outcome | null> {
  const endpoint = relayEndpoint(io.env);
  const body = { ...(req.device ? { device: req.device } : {}), ...(req.before ? { before: req.before.toISOString() } : {}), dry_run: dryRun };
  let answer;
  try {
    answer = await requestJson(endpoint, 'POST', '/console/api/personal-data/forget', body, 60_000);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (endpoint.found === 'environment' && (code === 'ECONNREFUSED' || code === 'EADDRNOTAVAIL')) return null;
    throw relayUnreachable(endpoint, err, io.env);
  }
  if (answer.status !== 200) throw relayRefused(endpoint, answer, io.env);
  return { ...(answer.body as ForgetAnswer), via: 'relay' };
}

/** The home's lock for the time of the forgetting; a relay that started meanwhile is named, in one sentence. */
function takeHome(dir: string): HeldLock {
  try {
    return acquireLogLock(dir, 'relay home');
  } catch (err) {
    if (err instanceof LogLockedError)
      throw new CliError(`${err.message}; it started while this ran: run the same command again, and it will ask that relay`);
    throw err;
  }
}

/**
 * No relay runs: the home's log (or database), taken as its writer for the time of the forgetting. A dry
 * run reads the log too: which keys a device received content under is in it.
 */
async function onFiles(io: CliIo, req: ForgetRequest, dryRun: boolean): Promise<Outcome> {
  const config: RelayConfig = loadConfig(io.env);
  const keys = await openKeyStore(config);
  try {
    const lock = takeHome(relayDir(config));
    try {
      const loop = await openOfflineLoop(config, keys);
      try {
        if (dryRun) return { ok: true, keys: keysToForget(keys.ids(), req, loop.models.personalData).length, seq: null, dry_run: true, via: 'files' };
        const [e] = await loop.run('operator', (m) => forgetEvents(keys.ids(), req, m.personalData));
        if (!e) return { ok: true, keys: 0, seq: null, dry_run: false, via: 'files' };
        const ids = (e.data as { keys: string[] }).keys;
        await keys.destroy(ids);
        await loop.renewSnapshots();
        return { ok: true, keys: ids.length, seq: e.seq, dry_run: false, via: 'files' };
      } finally {
        await loop.close();
      }
    } finally {
      lock.release();
    }
  } finally {
    await keys.close();
  }
}
