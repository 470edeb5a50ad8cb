import { parseArgs } from 'node:util';
import { createLogger } from '../common/logger';
import { ReachBroker } from '../reach/broker';
import { BrokerConfigError } from '../reach/broker-credentials';
import type { BrokerLimits } from '../reach/broker-options';
import { newToken, tokenSha256 } from '../reach/protocol';
import { loadOrCreateHostId } from '../reach/connector-config';
import { svcHomeFrom } from '../common/config/config';
import { reachHostIdFile } from '../secure-link/secure-link-paths';
import { CliError, EXIT, line, UsageError, type CliIo } from './io';

const COMMAND = 'reach';

/** The broker's bounds an operator may set, each a whole number within its range (docs/PROTOCOL.md, Reach). */
const LIMIT_FLAGS = {
  'streams-per-route': { limit: 'streamsPerRoute', min: 1, max: 1024 },
  'refusals-per-minute': { limit: 'refusalsPerMinute', min: 1, max: 1_000_000 },
  'refusals-per-minute-total': { limit: 'refusalsPerMinuteTotal', min: 1, max: 100_000_000 },
  'replay-ids': { limit: 'replayIds', min: 1, max: 100_000_000 },
  'tracked-sources': { limit: 'trackedSources', min: 1, max: 10_000_000 },
} as const;

function limitsFrom(values: Record<string, string | boolean | undefined>): Partial<BrokerLimits> {
  const limits: Partial<BrokerLimits> = {};
  for (const [flag, { limit, min, max }] of Object.entries(LIMIT_FLAGS)) {
    const raw = values[flag];
    if (typeof raw !== 'string') continue;
    const n = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
    if (!(n >= min && n <= max)) throw new UsageError(`--${flag} ${raw.slice(0, 40)}: a whole number from ${min} to ${max}`, COMMAND);
    limits[limit] = n;
  }
  return limits;
}

/**
 * `svc reach --credentials FILE [--listen ADDR] [--port P] [--tls-cert C --tls-key K] [--state FILE]
 * [limits]`: the Reach broker, on a host phones and the relay can both reach. Runs until SIGINT/SIGTERM;
 * SIGHUP re-reads the credentials file. Public listeners need TLS; plain text only on loopback.
 */
export async function reachCommand(args: string[], io: CliIo): Promise<number> {
  let v;
  try {
    v = parseArgs({
      args,
      strict: true,
      options: {
        credentials: { type: 'string' },
        listen: { type: 'string' },
        port: { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        state: { type: 'string' },
        'log-level': { type: 'string' },
        ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((f) => [f, { type: 'string' as const }])),
      },
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message, COMMAND);
  }
  if (!v.credentials) throw new UsageError('--credentials FILE is required (host ids and the SHA-256 digests of their host tokens)', COMMAND);
  const port = v.port === undefined ? 9444 : Number(v.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port ${v.port}: 0-65535`, COMMAND);
  if (Boolean(v['tls-cert']) !== Boolean(v['tls-key'])) throw new UsageError('--tls-cert and --tls-key go together', COMMAND);
  const limits = limitsFrom(v);
  const level = (v['log-level'] ?? 'INFO').toUpperCase();
  const logger = createLogger(['DEBUG', 'INFO', 'WARNING', 'ERROR'].includes(level) ? (level as 'INFO') : 'INFO');
  let broker: ReachBroker;
  try {
    broker = new ReachBroker({
      credentialsFile: v.credentials,
      stateFile: v.state ?? null,
      listen: v.listen ?? '127.0.0.1',
      port,
      tls: v['tls-cert'] ? { cert: v['tls-cert'], key: v['tls-key']! } : null,
      logger,
      limits,
    });
    await broker.start();
  } catch (err) {
    if (err instanceof BrokerConfigError) throw new CliError(err.message);
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new CliError(`port ${port} is in use`);
    if (e.code === 'ENOENT') throw new CliError(`file not found: ${e.path ?? e.message}`);
    throw new CliError(`could not start: ${e.message}`);
  }
  line(io.stderr, `svc reach listening on ${broker.url.replace('/v1/connect', '')} (health: /health, hosts connect to ${broker.url})`);
  const onHup = () => {
    try {
      broker.reloadCredentials();
      logger.info('credentials reloaded');
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'credentials not reloaded; the previous ones stay');
    }
  };
  process.on('SIGHUP', onHup);
  await new Promise<void>((resolve) => {
    if (io.signal?.aborted) return resolve();
    io.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  process.off('SIGHUP', onHup);
  await broker.close();
  return EXIT.ok;
}

/**
 * `svc reach host-entry [--json]`, on the relay's machine: this relay's Reach host id (made once) and a new
 * host token, printed as the line for the relay's environment and the entry for the broker's credentials
 * file (the token's digest only). The token is shown once; the broker never needs it.
 */
export function hostEntryCommand(args: string[], io: CliIo): number {
  const json = args.includes('--json');
  const unknown = args.find((a) => a !== '--json');
  if (unknown) throw new UsageError(`unknown argument ${unknown}`, 'reach host-entry');
  const home = svcHomeFrom(io.env);
  const file = reachHostIdFile({ svcHome: home }, io.env.RELAY_SECURE_LINK_BROKER_HOST_ID_FILE?.trim() || null);
  const hostId = loadOrCreateHostId(file);
  const token = newToken();
  const entry = { hosts: { [hostId]: { host_token_sha256: tokenSha256(token) } } };
  if (json) {
    line(io.stdout, JSON.stringify({ host_id: hostId, host_token: token, credentials_entry: entry }));
    return EXIT.ok;
  }
  line(io.stdout, `Reach host id ${hostId} (${file})`);
  line(io.stdout, '');
  line(io.stdout, "In the relay's environment (its .env, mode 0600), with RELAY_EXPERIMENTAL_REACH_ENABLED=1 and RELAY_SECURE_LINK_BROKER_URL:");
  line(io.stdout, `  RELAY_SECURE_LINK_BROKER_HOST_TOKEN=${token}`);
  line(io.stdout, '');
  line(io.stdout, "In the broker's credentials file (the digest only):");
  line(io.stdout, `  ${JSON.stringify(entry)}`);
  return EXIT.ok;
}
