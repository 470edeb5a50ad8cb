import * as fs from 'node:fs';
import * as path from 'node:path';
import { NoteFormatError, parseVkey } from '@svc/events/merkle/note';
import { svcHomeFrom } from '../common/config/config';
import { setTimeout as sleep } from 'node:timers/promises';
import { openWitnessHome, witnessOnce, type WitnessHome, type WitnessOutcome } from '../transparency/witness-run';
import { SerialLock, servedBy } from '../transparency/witness-serve';
import { CliError, colours, EXIT, line, parseFlags, UsageError, type CliIo } from './io';
import { listen, parseListen } from './witness-listen';

const COMMAND = 'relay witness';

/**
 * `svc relay witness`: one round of a witness off the relay's host (run it from cron or a timer on
 * another machine). `--print-vkey` makes the witness key (with --name) and prints its cosignature
 * verifier key, for the relay's RELAY_WITNESS_VKEYS. A refusal exits 1 with a line saying why, and is kept
 * in the home (refusals.jsonl, witness.prom). `--listen` serves C2SP tlog-witness add-checkpoint instead
 * (or beside `--relay --interval` rounds, in one process sharing the home's state).
 */
export async function witnessCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags(COMMAND, args, {
    home: { type: 'string' },
    name: { type: 'string' },
    relay: { type: 'string' },
    'log-vkey': { type: 'string' },
    'print-vkey': { type: 'boolean' },
    json: { type: 'boolean' },
    interval: { type: 'string' },
    listen: { type: 'string' },
  });
  const at = v.listen === undefined ? null : parseListen(v.listen);
  if (v.listen !== undefined && !at) throw new UsageError('--listen HOST:PORT (e.g. 127.0.0.1:8780; port 0: any free port)', COMMAND);
  let interval: number | null = null;
  if (v.interval !== undefined) {
    interval = /^\d{1,6}$/.test(v.interval) ? Number(v.interval) : NaN;
    if (!(interval >= 1 && interval <= 86_400)) throw new UsageError('--interval: whole seconds from 1 to 86400', COMMAND);
  }
  const dir = path.resolve(v.home ?? path.join(svcHomeFrom(io.env), 'witness'));
  let home;
  try {
    home = openWitnessHome(dir, v.name);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  if (v['print-vkey']) {
    line(io.stdout, home.vkey);
    return EXIT.ok;
  }
  if ((!at || v.relay !== undefined) && (v.relay === undefined || !/^https?:\/\/[^\s]{1,2000}$/.test(v.relay)))
    throw new UsageError('give the relay to witness: --relay https://host:port (or serve add-checkpoint: --listen HOST:PORT)', COMMAND);
  if (at && v.relay !== undefined && interval === null)
    throw new UsageError('--listen with --relay runs pull rounds beside the server: give --interval SECONDS too', COMMAND);
  const server = servedBy(home);
  if (!at && server !== null)
    throw new CliError(`this witness home is served by process ${server} (--listen): only that process updates it; give it --relay and --interval`);
  const vkeyFile = path.join(dir, 'log.vkey');
  const kept = fs.existsSync(vkeyFile) ? fs.readFileSync(vkeyFile, 'utf8').trim() : null;
  if (kept && v['log-vkey'] && v['log-vkey'] !== kept)
    throw new CliError(`this witness follows ${kept.split('+')[0]}; a home follows one log (give another --home)`);
  const logVkey = v['log-vkey'] ?? kept;
  if (!logVkey)
    throw new UsageError('the first run needs the log\'s verifier key: --log-vkey VKEY (from "svc relay events vkey" on the relay\'s host)', COMMAND);
  try {
    parseVkey(logVkey);
  } catch (err) {
    if (err instanceof NoteFormatError) throw new CliError(`--log-vkey: ${err.message}`);
    throw err;
  }
  if (!kept) fs.writeFileSync(vkeyFile, logVkey + '\n', { mode: 0o644 });
  const report = (r: WitnessOutcome, compact: boolean) => say(io, r, v.relay!, dir, Boolean(v.json), compact);
  if (at) {
    const lock = new SerialLock();
    const serving = await listen(home, parseVkey(logVkey), at, lock, io, Boolean(v.json));
    const pulled = v.relay === undefined ? null : await rounds(home, v.relay, logVkey, interval!, io, (r) => report(r, true), lock);
    const { refused } = await serving.stopped;
    return stopped(io, { refused: refused || Boolean(pulled?.refused), unreachable: Boolean(pulled?.unreachable) });
  }
  if (interval === null) return report(await witnessOnce(home, v.relay!, logVkey, Math.floor(Date.now() / 1000)), false) ? EXIT.ok : EXIT.failed;
  return stopped(io, await rounds(home, v.relay!, logVkey, interval, io, (r) => report(r, true)));
}

/** Prints one round's outcome; true when it cosigned. */
function say(io: CliIo, r: WitnessOutcome, relay: string, dir: string, json: boolean, compact: boolean): boolean {
  if (json) line(io.stdout, compact ? JSON.stringify(r) : JSON.stringify(r, null, 2));
  if (r.ok) {
    if (!json) {
      const c = colours(io.stdout, io.env);
      const from = r.previous ? `consistent with ${r.previous.size} cosigned before` : 'first checkpoint seen';
      line(
        io.stdout,
        `${c.green('cosigned')}  ${r.cosigned.origin} tree size ${r.cosigned.size} (${from})${r.submitted ? '' : '; the relay did not take the cosignature'}`,
      );
    }
    return true;
  }
  const e = colours(io.stderr, io.env);
  line(io.stderr, `${e.red('WITNESS REFUSED')}  ${relay}: ${r.reason} (${r.code}; recorded in ${path.join(dir, 'refusals.jsonl')})`);
  return false;
}

/** The longest wait between rounds while the relay is unreachable: doubling from the interval, bounded. */
export const backoffSeconds = (interval: number, failures: number) => Math.min(interval * 2 ** Math.min(failures, 20), Math.max(interval, 900));

/**
 * `--interval`: rounds until SIGTERM/SIGINT (io.signal), each a full round as above. A refusal is said
 * every round (the witness keeps refusing until the log is consistent again) and makes the exit status 1
 * when it stops; an unreachable relay is retried with a doubling, bounded delay, and exits 1 only if the
 * last round still could not reach it. Beside --listen each round holds `lock`, so a round and an
 * add-checkpoint request never interleave their check-and-update of the kept tree.
 */
async function rounds(
  home: WitnessHome,
  relay: string,
  logVkey: string,
  interval: number,
  io: CliIo,
  report: (r: WitnessOutcome) => boolean,
  lock = new SerialLock(),
): Promise<{ refused: boolean; unreachable: boolean }> {
  const signal = io.signal;
  let refused = false;
  let unreachable = 0;
  while (!signal?.aborted) {
    const r = await lock.run(() => witnessOnce(home, relay, logVkey, Math.floor(Date.now() / 1000)));
    report(r);
    if (!r.ok && r.code !== 'unreachable') refused = true;
    unreachable = !r.ok && r.code === 'unreachable' ? unreachable + 1 : 0;
    const wait = unreachable ? backoffSeconds(interval, unreachable - 1) : interval;
    if (unreachable) line(io.stderr, `witness: the relay is unreachable (${unreachable} in a row); next round in ${wait} s`);
    try {
      await sleep(wait * 1000, undefined, signal ? { signal } : {});
    } catch {
      break; // stopped
    }
  }
  return { refused, unreachable: unreachable > 0 };
}

/** The last line of --interval and --listen: why it exits as it does. */
function stopped(io: CliIo, r: { refused: boolean; unreachable: boolean }): number {
  const status = r.refused ? 'a refusal was reported; exit 1' : r.unreachable ? 'the relay was unreachable at the last round; exit 1' : 'exit 0';
  line(io.stderr, `witness: stopped (${status})`);
  return r.refused || r.unreachable ? EXIT.failed : EXIT.ok;
}
