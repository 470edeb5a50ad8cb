import * as fs from 'node:fs';
import * as path from 'node:path';
import { NoteFormatError, parseVkey } from '@svc/events/merkle/note';
import { svcHomeFrom } from '../common/config/config';
import { openWitnessHome, witnessOnce } from '../transparency/witness-run';
import { CliError, colours, EXIT, line, parseFlags, UsageError, type CliIo } from './io';

const COMMAND = 'relay witness';

/**
 * `svc relay witness`: one round of a witness off the relay's host (run it from cron or a timer on
 * another machine). `--print-vkey` makes the witness key (with --name) and prints its cosignature
 * verifier key, for the relay's RELAY_WITNESS_VKEYS. A refusal exits 1 with a line saying why, and is kept
 * in the home (refusals.jsonl, witness.prom).
 */
export async function witnessCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags(COMMAND, args, {
    home: { type: 'string' },
    name: { type: 'string' },
    relay: { type: 'string' },
    'log-vkey': { type: 'string' },
    'print-vkey': { type: 'boolean' },
    json: { type: 'boolean' },
  });
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
  if (v.relay === undefined || !/^https?:\/\/[^\s]{1,2000}$/.test(v.relay))
    throw new UsageError('give the relay to witness: --relay https://host:port', COMMAND);
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
  const r = await witnessOnce(home, v.relay, logVkey, Math.floor(Date.now() / 1000));
  if (v.json) line(io.stdout, JSON.stringify(r, null, 2));
  if (r.ok) {
    if (!v.json) {
      const c = colours(io.stdout, io.env);
      const from = r.previous ? `consistent with ${r.previous.size} cosigned before` : 'first checkpoint seen';
      line(
        io.stdout,
        `${c.green('cosigned')}  ${r.cosigned.origin} tree size ${r.cosigned.size} (${from})${r.submitted ? '' : '; the relay did not take the cosignature'}`,
      );
    }
    return EXIT.ok;
  }
  const e = colours(io.stderr, io.env);
  line(io.stderr, `${e.red('WITNESS REFUSED')}  ${v.relay}: ${r.reason} (${r.code}; recorded in ${path.join(dir, 'refusals.jsonl')})`);
  return EXIT.failed;
}
