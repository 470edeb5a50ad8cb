import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig, relayDir } from '../common/config/config';
import { ConfigError } from '../common/config/config-env';
import { KEK_FILE, kekPath, parseKek, pullSharedSecrets, SharedSecretsError } from '../standby/shared-secrets';
import { atomicWrite } from '../common/atomic-write';
import { CliError, EXIT, line, parseFlags, UsageError, type CliIo } from './io';

const COMMAND = 'relay standby init';

/**
 * `svc relay standby init --from <leader home | its standby.kek>`: prepares this home (SVC_HOME) for a hot
 * standby of the leader on the same database (RELAY_EVENT_STORE). It copies exactly one file, the
 * leader's key-encryption key (`relay/standby.kek`), and then writes the database's shared secrets
 * (secret.key, operator.key, checkpoint-key.pem) into this home: it proves the key opens them.
 */
export async function standbyInitCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags(COMMAND, args, { from: { type: 'string' } });
  if (!v.from) throw new UsageError(`--from: the leader's home (or the ${KEK_FILE} copied from it)`, COMMAND);
  let config;
  try {
    config = loadConfig(io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
  if (!config.eventStoreUrl)
    throw new CliError("a standby shares the leader's database: set RELAY_EVENT_STORE=postgres://... (the leader's)", EXIT.usage);
  const from = path.resolve(v.from);
  const source = fs.existsSync(from) && fs.statSync(from).isDirectory() ? kekPath(path.join(from, 'relay')) : from;
  if (!fs.existsSync(source))
    throw new CliError(`${source} not found: start the leader on PostgreSQL once (it makes its ${KEK_FILE}), then copy it here`, EXIT.usage);
  const kek = parseKek(fs.readFileSync(source, 'utf8'), source);
  const dir = relayDir(config);
  const target = kekPath(dir);
  if (fs.existsSync(target) && !parseKek(fs.readFileSync(target, 'utf8'), target).equals(kek))
    throw new CliError(`${target} holds another key-encryption key: this home belongs to another install (use an empty home)`, EXIT.usage);
  let written: string[];
  try {
    written = await pullSharedSecrets(config.eventStoreUrl, dir, kek);
  } catch (err) {
    if (err instanceof SharedSecretsError) throw new CliError(err.message, EXIT.failed);
    throw err;
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  atomicWrite(target, kek.toString('base64url') + '\n', { mode: 0o600 });
  line(io.stdout, `copied ${KEK_FILE} from ${source}; wrote from the database: ${written.join(', ')} (in ${dir})`);
  line(io.stdout, 'start the standby with: svc relay start --standby (the same RELAY_EVENT_STORE)');
  return EXIT.ok;
}
