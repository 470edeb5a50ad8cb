import { ChainError, EventTooNewError, LOCK_FILE, LogLockedError, PgConnectError, PgLogLockedError, plural, SchemaTooNewError } from '@svc/events';
import * as net from 'node:net';
import * as path from 'node:path';
import { loadConfig, relayDir, svcHomeFrom } from '../common/config/config';
import { ConfigError } from '../common/config/config-env';
import { type RelayConfig, type StartFlags } from '../common/config/relay-config';
import { BIND_ALL, DEFAULT_PORT } from '../common/config/hosts';
import { withServiceEnvFile, type EnvFileResult } from '../common/config/env-file';
import { consoleLine, consoleWhere } from '../console/console-url';
import { createRelay, type Relay } from '../relay';
import { CliError, colours, EXIT, line, parseFlags, UsageError, type CliIo } from './io';
import { prettyDestination } from './pretty-log';
import { cutText } from './events';
import { PrunedWithoutSnapshotError } from '../common/loop/command-loop';
import { selfCommand } from './self-command';

const COMMAND = 'relay start';

export function parseStartFlags(args: string[]): StartFlags {
  const v = parseFlags(COMMAND, args, {
    host: { type: 'string' },
    port: { type: 'string' },
    'no-ssl': { type: 'boolean' },
    shell: { type: 'string' },
    'webapi-url': { type: 'string' },
    'log-level': { type: 'string' },
    config: { type: 'string' },
    'allow-insecure-api-key': { type: 'boolean' },
    'client-spelling': { type: 'string' },
    standby: { type: 'boolean' },
  });
  const flags: StartFlags = {};
  if (v.host !== undefined) {
    if (!/^[A-Za-z0-9.:\-[\]%]+$/.test(v.host)) throw new UsageError(`--host ${v.host}: not a host name or IP address`, COMMAND);
    flags.host = v.host.replace(/^\[(.*)\]$/, '$1');
  }
  if (v.port !== undefined) {
    const port = Number(v.port);
    if (!/^\d+$/.test(v.port) || port > 65535) throw new UsageError(`--port ${v.port}: a port number 0-65535`, COMMAND);
    flags.port = port;
  }
  if (v['no-ssl']) flags.noSsl = true;
  if (v.shell !== undefined) {
    if (!path.isAbsolute(v.shell)) throw new UsageError(`--shell ${v.shell}: give the shell's absolute path`, COMMAND);
    flags.shell = v.shell;
  }
  if (v['webapi-url'] !== undefined) {
    if (!isHttpUrl(v['webapi-url'])) throw new UsageError(`--webapi-url ${v['webapi-url']}: an http:// or https:// URL`, COMMAND);
    flags.webapiUrl = v['webapi-url'];
  }
  if (v['log-level'] !== undefined) flags.logLevel = v['log-level'];
  if (v.config !== undefined) flags.config = path.resolve(v.config);
  if (v['allow-insecure-api-key']) flags.allowInsecureApiKey = true;
  if (v.standby) flags.standby = true;
  if (v['client-spelling'] !== undefined) {
    if (v['client-spelling'] !== 'svc' && v['client-spelling'] !== 'hermes')
      throw new UsageError(`--client-spelling ${v['client-spelling']}: svc (the spec's names) or hermes (the public app and CLI)`, COMMAND);
    flags.clientSpelling = v['client-spelling'];
  }
  return flags;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Fails early, before the log is opened, when the port is taken (the common mistake: a relay already runs). */
function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

const BIND_HINT = 'listen on 0.0.0.0 (every interface, what phones need), 127.0.0.1 (this machine only) or one of its own addresses';

function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  switch (err.code) {
    case 'EADDRINUSE':
      return new CliError(
        `port ${port} on ${host} is already in use (is a relay already running? "svc relay pair" talks to it); stop it or pick --port`,
      );
    case 'EACCES':
      return new CliError(`not allowed to listen on port ${port} (ports below 1024 need privileges); pick --port`);
    case 'EADDRNOTAVAIL':
      return new CliError(`RELAY_HOST/--host ${host} is not an address of this machine: ${BIND_HINT}`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new CliError(`RELAY_HOST/--host ${host}: no such host (the name does not resolve): ${BIND_HINT}`);
    default:
      return err;
  }
}

export type StartHooks = { onListening?: (url: string) => void };

/** `svc relay start`: runs until io.signal aborts (SIGINT/SIGTERM), then closes cleanly. */
export async function startCommand(args: string[], io: CliIo): Promise<number> {
  const flags = parseStartFlags(args);
  const signal = io.signal; // from here on, SIGINT/SIGTERM stop the relay cleanly (even during start-up)
  let config: RelayConfig;
  let envFile: EnvFileResult;
  try {
    // Spec 4.13: the service's environment file, under what the process environment already sets.
    envFile = withServiceEnvFile(io.env, svcHomeFrom(io.env));
    for (const name of envFile.loaded ?? []) io.env[name] = envFile.env[name];
    config = loadConfig(io.env, flags);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`configuration: ${err.message}`);
    if ((err as NodeJS.ErrnoException).code !== undefined || /environment file/.test((err as Error).message))
      throw new CliError(`configuration: ${(err as Error).message}`);
    throw err;
  }
  const format = (io.env.RELAY_LOG_FORMAT ?? '').toLowerCase();
  if (format !== '' && format !== 'json' && format !== 'pretty')
    throw new CliError(`configuration: RELAY_LOG_FORMAT must be json or pretty, got "${io.env.RELAY_LOG_FORMAT}"`);
  const pretty = format === 'pretty' || (format === '' && Boolean(io.stdout.isTTY));
  const err = colours(io.stderr, io.env);

  await assertPortFree(config.host, config.port);
  let relay;
  try {
    relay = await createRelay({
      config,
      logDestination: pretty ? prettyDestination(io.stdout, Boolean(io.stdout.isTTY) && !io.env.NO_COLOR) : undefined,
    });
  } catch (e) {
    if (e instanceof ChainError) {
      throw new CliError(
        `the event log is broken at seq ${e.seq} (${e.segment}): ${e.reason}\n` +
          `the relay refuses to start on a log it cannot prove; inspect it with "svc relay events verify${config.eventStoreUrl ? '' : ` --log ${path.join(relayDir(config), 'events')}`}"`,
      );
    }
    if (e instanceof PrunedWithoutSnapshotError) throw new CliError(e.message);
    if (e instanceof EventTooNewError) throw new CliError(`${e.message}\nthe relay refuses to start on records it would misread: ${e.hint}`);
    if (e instanceof PgLogLockedError) {
      throw new CliError(
        `${e.message}\n` +
          `two relays on one log would fork its chain: stop the other one, or give this one its own database or schema (?options=-c%20search_path%3DNAME)`,
      );
    }
    if (e instanceof PgConnectError || e instanceof SchemaTooNewError) throw new CliError(e.message);
    if (e instanceof LogLockedError) {
      const why =
        e.what === 'relay home'
          ? "two relays on one home would delete each other's uploads and rewrite each other's secrets, whatever store holds their logs"
          : 'two relays on one log would fork its chain';
      throw new CliError(
        `${e.message}\n` +
          `${why}: stop the other one ("svc relay pair" talks to it), or give this one its own SVC_HOME\n` +
          `(if you are sure no relay uses it, the lock is stale: remove ${path.join(e.dir, LOCK_FILE)})`,
      );
    }
    const listenFailure = listenError(e as NodeJS.ErrnoException, config.host, config.port);
    if (listenFailure instanceof CliError) throw listenFailure;
    throw new CliError(`could not start: ${(e as Error).message}`);
  }

  const bound = config.host.includes(':') ? `[${config.host}]` : config.host;
  const scheme = config.tls ? 'https' : 'http';
  line(
    io.stderr,
    `${err.green('svc relay')} ${relay.runtime.version} listening on ${scheme}://${bound}:${relay.port}` +
      (relay.url.includes(bound) ? '' : ` (this host: ${relay.url})`),
  );
  line(
    io.stderr,
    `event log ${relay.loop.location} (last seq ${relay.loop.lastSeq}${relay.loop.cut ? `, ${cutText(relay.loop.cut)}` : ''}${relay.loop.recovered ? `, cut a torn last line of ${relay.loop.recovered.droppedBytes} bytes` : ''}${relay.loop.staleLock ? `, the previous relay${relay.loop.staleLock.pid === null ? '' : ` (pid ${relay.loop.staleLock.pid})`} did not stop` : ''})`,
  );
  const role = relay.loop.storeKind === 'postgres' ? relay.loop.role() : null;
  if (role?.role === 'standby')
    line(
      io.stderr,
      `${err.yellow('standby')}: following the leader's log (epoch ${role.epoch ?? 'none yet'}); phone sockets and writes get 503 relay.standby until the leader's session ends and this relay takes over`,
    );
  else if (role) line(io.stderr, `leader of the event log, epoch ${role.epoch}`);
  if (envFile.loaded)
    line(
      io.stderr,
      `environment file ${envFile.file}: ${envFile.loaded.length === 0 ? 'nothing new (the process environment already sets its variables)' : `${plural(envFile.loaded.length, 'variable')} (${envFile.loaded.join(', ')})`}`,
    );
  const where = consoleWhere(config, relay.port);
  line(io.stderr, consoleLine(where));
  if (where.state !== 'unreachable') line(io.stderr, await signInLine(relay, io));
  if (!config.tls) line(io.stderr, err.dim('plain HTTP/ws: phones must opt in to a plain connection; set RELAY_SSL_CERT and RELAY_SSL_KEY for TLS'));
  if (io.stderr.isTTY || io.stdout.isTTY) {
    const envHint = config.port !== DEFAULT_PORT.relay || config.host !== BIND_ALL ? `RELAY_HOST=${config.host} RELAY_PORT=${relay.port} ` : '';
    line(io.stderr, `Pair a phone: run "${envHint}${selfCommand(io.env)} relay pair" in another terminal on this machine, then scan the QR code.`);
    line(io.stderr, err.dim('Ctrl-C stops the relay.'));
  }

  const signalName = await new Promise<string>((resolve) => {
    if (!signal) return;
    if (signal.aborted) return resolve(String(signal.reason ?? 'shutdown'));
    signal.addEventListener('abort', () => resolve(String(signal.reason ?? 'shutdown')), { once: true });
  });
  line(io.stderr, `stopping (${signalName})...`);
  await relay.close(signalName);
  line(io.stderr, 'stopped');
  return EXIT.ok;
}

/**
 * The console's one-time sign-in link, on a terminal only: under a service manager stderr is a log
 * (journald), and a credential must never sit in one; there `svc relay console` prints a link on demand.
 */
async function signInLine(relay: Relay, io: CliIo): Promise<string> {
  const c = colours(io.stderr, io.env);
  // A standby records nothing, so it cannot issue a link: sign in on the leader (its console cookie works here too).
  if (!io.stderr.isTTY || relay.loop.standby) return c.dim('console sign-in: run "svc relay console" on this machine for a one-time link');
  const link = await relay.consoleLink();
  return `console sign-in ${link.url} ${c.dim('(once, within 15 minutes, in a browser on this machine; "svc relay console" prints another)')}`;
}
