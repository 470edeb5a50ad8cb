import {
  isPostgresUrl,
  PgLogSource,
  plural,
  readLogLock,
  schemaVersion,
  SCHEMA_VERSION,
  verifySource,
  verifyLog,
  writerLockHolder,
} from '@svc/events';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { svcHomeFrom } from '../common/config';
import { DEFAULT_WEBAPI_URL } from '../common/hosts';
import { EXIT, line, UsageError, colours, type CliIo } from './io';
import { relayEndpoint, requestJson } from './relay-client';

const COMMAND = 'relay doctor';
type Status = 'ok' | 'warn' | 'error';
export type DoctorCheck = { id: string; status: Status; summary: string; fix?: string };

const GiB = 1024 ** 3;

/**
 * `svc relay doctor [--json]` (spec 4.13): the relay, the agent's native routes through RELAY_WEBAPI_URL's
 * `/v1/capabilities`, TLS, the event log's chain and lock, disk, and the service .env's permissions; each
 * check with a fix hint. Read-only, and never prints a secret (keys are sent, never shown). Exit 1 when a
 * check is an error, else 0.
 */
export async function doctorCommand(args: string[], io: CliIo): Promise<number> {
  const json = args.includes('--json');
  const other = args.find((a) => a !== '--json');
  if (other) throw new UsageError(other.startsWith('-') ? `unknown option ${other}` : `unexpected argument "${other}"`, COMMAND);
  const env = io.env;
  const home = svcHomeFrom(env);
  const checks: DoctorCheck[] = [];

  // The relay on this host.
  let endpointUrl = '';
  let secureLink: SecureLinkHealth | null = null;
  let spelling: string | null = null;
  try {
    const endpoint = relayEndpoint(env);
    endpointUrl = endpoint.url;
    const h = await requestJson(endpoint, 'GET', '/health', undefined, 3000);
    const body = h.body as { status?: string; version?: string; sessions?: number; client_spelling?: string; secure_link?: SecureLinkHealth };
    secureLink = body?.secure_link ?? null;
    spelling = body?.client_spelling ?? null;
    checks.push(
      h.status === 200 && body?.status === 'ok'
        ? { id: 'relay', status: 'ok', summary: `relay ${body.version ?? '?'} answers at ${endpoint.url} (${plural(body.sessions ?? 0, 'session')})` }
        : {
            id: 'relay',
            status: 'error',
            summary: `${endpoint.url}/health answered ${h.status}`,
            fix: 'check the relay log; restart it with "svc relay start"',
          },
    );
  } catch (err) {
    checks.push({
      id: 'relay',
      status: 'error',
      summary: `no relay answers at ${endpointUrl || 'RELAY_HOST/RELAY_PORT'} (${(err as Error).message})`,
      fix: 'start it with "svc relay start" (with no relay holding this SVC_HOME, RELAY_HOST and RELAY_PORT name the one to ask)',
    });
  }

  // Who is the operator: the key in the home, and what loopback alone still opens (issue 34).
  checks.push(...operatorChecks(home, env, listeningPorts()));

  // Which names the relay writes: the public app and CLI understand only `hermes`.
  if (spelling === 'svc')
    checks.push({
      id: 'client-spelling',
      status: 'ok',
      summary: "the relay writes the spec's svc names (svc-relay://, MEDIA:svc-relay://, /return_to_svc)",
      fix: 'to pair the public phone app or desktop CLI, start the relay with RELAY_CLIENT_SPELLING=hermes',
    });
  else if (spelling === 'hermes')
    checks.push({
      id: 'client-spelling',
      status: 'ok',
      summary: "the relay writes the public clients' hermes names (hermes-relay://, MEDIA:hermes-relay://, /return_to_hermes)",
    });

  // Secure Link and Reach, as the running relay reports them.
  if (secureLink) checks.push(...secureLinkChecks(secureLink));

  // The compatibility hook, from the files only (independent of the relay and of the API server).
  try {
    const { compatStatus } = await import('./compat');
    const c = compatStatus(env);
    const dangling = c.pth_files.filter((f) => !f.module_present);
    checks.push(
      !c.installed
        ? { id: 'compat-hook', status: 'ok', summary: 'the compatibility hook is not installed (only older API servers need it)' }
        : dangling.length
          ? {
              id: 'compat-hook',
              status: 'warn',
              summary: `${dangling[0].path} loads ${c.module.path}, which is missing: it does nothing`,
              fix: 'svc relay compat install (or remove)',
            }
          : {
              id: 'compat-hook',
              status: c.module.current ? 'ok' : 'warn',
              summary: `the compatibility hook is installed (${c.pth_files.map((f) => f.path).join(', ')})${c.module.current ? '' : ', an older version'}`,
              ...(c.module.current ? {} : { fix: 'svc relay compat install, then restart the API server' }),
            },
    );
  } catch (err) {
    checks.push({
      id: 'compat-hook',
      status: 'warn',
      summary: `hook state unknown: ${(err as Error).message.split('\n')[0]}`,
      fix: 'set SVC_PYTHON to the agent python',
    });
  }

  // The agent's native routes.
  const webapi = (env.RELAY_WEBAPI_URL || DEFAULT_WEBAPI_URL).replace(/(?<!\/)\/+$/, '');
  try {
    const res = await fetch(`${webapi}/v1/capabilities`, {
      headers: env.API_SERVER_KEY ? { authorization: `Bearer ${env.API_SERVER_KEY}` } : {},
      signal: AbortSignal.timeout(3000),
    });
    await res.arrayBuffer();
    checks.push(
      res.ok
        ? { id: 'native-routes', status: 'ok', summary: `the API server at ${webapi} answers /v1/capabilities` }
        : res.status === 401 || res.status === 403
          ? {
              id: 'native-routes',
              status: 'warn',
              summary: `the API server at ${webapi} refused /v1/capabilities (${res.status})`,
              fix: "set API_SERVER_KEY to the API server's key",
            }
          : {
              id: 'native-routes',
              status: 'warn',
              summary: `the API server at ${webapi} answered /v1/capabilities with ${res.status}`,
              fix: 'update the agent, or point RELAY_WEBAPI_URL at its API server',
            },
    );
  } catch (err) {
    checks.push({
      id: 'native-routes',
      status: 'warn',
      summary: `no API server answers at ${webapi} (${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message})`,
      fix: "start the agent's API server, or set RELAY_WEBAPI_URL (the relay works without it; the realtime agent does not)",
    });
  }

  // TLS.
  if (env.RELAY_SSL_CERT) {
    try {
      const cert = new X509Certificate(fs.readFileSync(env.RELAY_SSL_CERT));
      const days = Math.floor((Date.parse(cert.validTo) - Date.now()) / 86_400_000);
      checks.push(
        days < 0
          ? {
              id: 'tls',
              status: 'error',
              summary: `the certificate expired ${-days} days ago (${cert.validTo})`,
              fix: 'renew RELAY_SSL_CERT and restart the relay',
            }
          : days < 14
            ? { id: 'tls', status: 'warn', summary: `the certificate expires in ${days} days (${cert.validTo})`, fix: 'renew RELAY_SSL_CERT soon' }
            : { id: 'tls', status: 'ok', summary: `TLS certificate valid for ${days} more days` },
      );
    } catch (err) {
      checks.push({
        id: 'tls',
        status: 'error',
        summary: `RELAY_SSL_CERT cannot be read as a certificate (${(err as Error).message.slice(0, 80)})`,
        fix: 'point RELAY_SSL_CERT at a PEM certificate',
      });
    }
  } else
    checks.push({
      id: 'tls',
      status: 'warn',
      summary: 'plain HTTP/ws: phones must opt in to a plain connection, and the API key is refused from other hosts',
      fix: 'set RELAY_SSL_CERT and RELAY_SSL_KEY, or put a TLS proxy in front (RELAY_TRUST_PROXY_HEADERS=1)',
    });

  // The event log: its chain and its lock.
  const events = path.join(home, 'relay', 'events');
  if (isPostgresUrl(env.RELAY_EVENT_STORE)) checks.push(...(await postgresLogChecks(env.RELAY_EVENT_STORE.trim())));
  else if (!fs.existsSync(events))
    checks.push({ id: 'log-chain', status: 'warn', summary: `no event log at ${events} yet`, fix: 'it is created by the first "svc relay start"' });
  else {
    try {
      const r = verifyLog(events);
      checks.push(
        r.ok
          ? {
              id: 'log-chain',
              status: 'ok',
              summary: `event log verified: ${plural(r.lastSeq, 'record')} in ${plural(r.segments, 'segment')}${r.tornTailBytes ? `, a torn last line of ${plural(r.tornTailBytes, 'byte')}` : ''}`,
            }
          : {
              id: 'log-chain',
              status: 'error',
              summary: `the event log is broken at seq ${r.seq} (${r.segment}): ${r.reason}`,
              fix: `inspect it with "svc relay events verify --log ${events}"`,
            },
      );
    } catch (err) {
      checks.push({
        id: 'log-chain',
        status: 'error',
        summary: `the event log could not be read (${(err as Error).message.slice(0, 100)})`,
        fix: `check the permissions of ${events}`,
      });
    }
    const holder = readLogLock(events);
    const alive = holder !== null && pidAlive(holder.pid);
    checks.push(
      holder === null
        ? { id: 'lock', status: 'ok', summary: 'no relay holds the event log' }
        : alive
          ? { id: 'lock', status: 'ok', summary: `held by the running relay (pid ${holder.pid} since ${holder.since})` }
          : {
              id: 'lock',
              status: 'warn',
              summary: `a lock from pid ${holder.pid} (not running) is left on the log`,
              fix: 'the next "svc relay start" takes it over and records it',
            },
    );
  }

  // Disk.
  try {
    const st = fs.statfsSync(fs.existsSync(home) ? home : path.dirname(home));
    const free = st.bavail * st.bsize;
    const gib = (free / GiB).toFixed(1);
    checks.push(
      free < 100 * 1024 ** 2
        ? {
            id: 'disk',
            status: 'error',
            summary: `${gib} GiB free where the relay writes`,
            fix: 'free disk space: the relay stops rather than lose an event',
          }
        : free < GiB
          ? { id: 'disk', status: 'warn', summary: `${gib} GiB free where the relay writes`, fix: 'free disk space soon' }
          : { id: 'disk', status: 'ok', summary: `${gib} GiB free where the relay writes` },
    );
  } catch (err) {
    checks.push({ id: 'disk', status: 'warn', summary: `free space unknown (${(err as Error).message.slice(0, 80)})` });
  }

  // The service's environment file holds keys: nobody else should read it.
  const envFile = path.join(home, '.env');
  try {
    const mode = fs.statSync(envFile).mode & 0o777;
    checks.push(
      mode & 0o044
        ? { id: 'env-file', status: 'warn', summary: `${envFile} is readable by others (mode ${mode.toString(8)})`, fix: `chmod 600 ${envFile}` }
        : { id: 'env-file', status: 'ok', summary: `${envFile} is private (mode ${mode.toString(8)})` },
    );
  } catch {
    checks.push({ id: 'env-file', status: 'ok', summary: 'no service .env file (variables come from the environment)' });
  }

  const worst: Status = checks.some((c) => c.status === 'error') ? 'error' : checks.some((c) => c.status === 'warn') ? 'warn' : 'ok';
  if (json) line(io.stdout, JSON.stringify({ schema_version: 1, status: worst, checks }));
  else {
    const c = colours(io.stdout, env);
    for (const k of checks) {
      const mark = k.status === 'ok' ? c.green('ok   ') : k.status === 'warn' ? c.yellow('warn ') : c.red('error');
      line(io.stdout, `${mark} ${k.id.padEnd(13)} ${k.summary}`);
      if (k.fix) line(io.stdout, `      ${''.padEnd(13)} ${c.dim(`fix: ${k.fix}`)}`);
    }
  }
  return worst === 'error' ? EXIT.failed : EXIT.ok;
}

/**
 * The operator key (present and private), and what RELAY_LOOPBACK_TRUST leaves to any loopback caller: with
 * the default `loopback`, the platform routes the host tools call (pairing register and mint, notifications,
 * Threads, bridge status...) answer anyone a same-host proxy or tunnel forwards. Something listening on 80 or
 * 443 here is most likely such a proxy.
 */
export function operatorChecks(home: string, env: NodeJS.ProcessEnv, listening: ReadonlySet<number>): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  const file = path.join(home, 'relay', 'operator.key');
  try {
    const mode = fs.statSync(file).mode & 0o777;
    out.push(
      mode & 0o077
        ? {
            id: 'operator-key',
            status: 'warn',
            summary: `${file} is readable by others (mode ${mode.toString(8)}): whoever reads it is the operator`,
            fix: `chmod 600 ${file}`,
          }
        : {
            id: 'operator-key',
            status: 'ok',
            summary: `the operator key is ${file} (mode ${mode.toString(8)}): the console, the CLI and operator routes need it`,
          },
    );
  } catch {
    out.push({
      id: 'operator-key',
      status: 'warn',
      summary: `no operator key at ${file} yet`,
      fix: 'the first "svc relay start" with this SVC_HOME makes it',
    });
  }
  const trust = (env.RELAY_LOOPBACK_TRUST ?? '').trim().toLowerCase() || 'loopback';
  const proxy = [80, 443].filter((p) => listening.has(p));
  if (trust === 'key')
    out.push({ id: 'loopback-trust', status: 'ok', summary: 'RELAY_LOOPBACK_TRUST=key: every route needs the operator key or a paired bearer' });
  else if (proxy.length > 0)
    out.push({
      id: 'loopback-trust',
      status: 'warn',
      summary: `something listens on port ${proxy.join(' and ')} here, and RELAY_LOOPBACK_TRUST=loopback: a reverse proxy or tunnel on this host that forwards without X-Forwarded-For lets anyone reach the host tools' platform routes (mint and register pairing codes, read notifications, post Threads)`,
      fix: 'set RELAY_LOOPBACK_TRUST=key (host tools then need MOBILE_BRIDGE_TOKEN/PHONE_RELAY_TOKEN), or have the proxy send X-Forwarded-For so the relay sees a remote caller',
    });
  else
    out.push({
      id: 'loopback-trust',
      status: 'ok',
      summary: "RELAY_LOOPBACK_TRUST=loopback: the host tools' platform routes answer any caller on this host; operator routes need the key",
    });
  return out;
}

/** TCP ports something on this host listens on, from /proc/net/tcp and tcp6 (empty where there is no /proc). */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const row of text.split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN.
      if (cols.length > 3 && cols[3] === '0A') ports.add(parseInt(cols[1].slice(cols[1].lastIndexOf(':') + 1), 16));
    }
  }
  return ports;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

type SecureLinkHealth = {
  enabled?: boolean;
  status?: string;
  url?: string;
  last_error?: string;
  identity_changed_at?: string;
  identity?: { pin_sha256?: string; not_after?: string };
  reach?: { enabled?: boolean; state?: string; last_error?: string | null };
};

/** Secure Link (on, off or broken; the identity's expiry and last change) and Reach, from `/health`. */
export function secureLinkChecks(sl: SecureLinkHealth): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  if (!sl.enabled) out.push({ id: 'secure-link', status: 'ok', summary: 'Secure Link is off (phones reach the relay directly)' });
  else if (sl.status !== 'available')
    out.push({
      id: 'secure-link',
      status: 'error',
      summary: `Secure Link is enabled but not running: ${sl.last_error ?? 'unknown reason'}`,
      fix: 'see GET /secure-link/preflight on this machine; fix the cause and restart the relay',
    });
  else {
    const days = sl.identity?.not_after ? Math.floor((Date.parse(sl.identity.not_after) - Date.now()) / 86_400_000) : null;
    const changed = sl.identity_changed_at ? `; the identity changed at ${sl.identity_changed_at}: phones paired before then must pair again` : '';
    out.push({
      id: 'secure-link',
      status: (days !== null && days < 30) || changed ? 'warn' : 'ok',
      summary: `Secure Link at ${sl.url ?? '?'} (pin ${sl.identity?.pin_sha256 ?? '?'}, certificate valid ${days ?? '?'} more days)${changed}`,
      ...(days !== null && days < 30
        ? { fix: 'renew the Secure Link certificate (a new one means pairing every phone again)' }
        : changed
          ? { fix: 'pair the affected phones again (svc relay pair)' }
          : {}),
    });
  }
  const r = sl.reach;
  if (r?.enabled)
    out.push(
      r.state === 'connected'
        ? { id: 'reach', status: 'ok', summary: 'Reach is connected to its broker' }
        : {
            id: 'reach',
            status: r.state === 'unavailable' ? 'error' : 'warn',
            summary: `Reach is ${r.state ?? 'unknown'}${r.last_error ? `: ${r.last_error}` : ''}`,
            fix:
              r.state === 'unavailable'
                ? 'set what the reason names and restart the relay'
                : 'check that the broker runs and the host token matches its credentials entry',
          },
    );
  return out;
}

/** RELAY_EVENT_STORE=postgres://...: the database answers, its schema, the chain, who holds the writer lock. */
async function postgresLogChecks(url: string): Promise<DoctorCheck[]> {
  const source = new PgLogSource(url);
  const checks: DoctorCheck[] = [];
  try {
    const c = await source.connection();
    const version = await schemaVersion(c);
    checks.push(
      version > SCHEMA_VERSION
        ? {
            id: 'log-store',
            status: 'error',
            summary: `${source.location}: schema version ${version}, newer than this relay's ${SCHEMA_VERSION}`,
            fix: 'run the relay version that wrote it',
          }
        : { id: 'log-store', status: 'ok', summary: `PostgreSQL event store ${source.location} (schema ${version || 'not created yet'})` },
    );
    const r = await verifySource(source);
    checks.push(
      r.ok
        ? { id: 'log-chain', status: 'ok', summary: `event log verified: ${plural(r.lastSeq, 'record')} in table svc_relay_events` }
        : {
            id: 'log-chain',
            status: 'error',
            summary: `the event log is broken at seq ${r.seq} (${r.segment}): ${r.reason}`,
            fix: 'inspect it with "svc relay events verify"',
          },
    );
    const holder = await writerLockHolder(c);
    checks.push({
      id: 'lock',
      status: 'ok',
      summary: holder
        ? `held by ${holder.application || `database backend pid ${holder.pid}`}${holder.since ? ` since ${holder.since}` : ''}`
        : 'no relay holds the event log',
    });
  } catch (err) {
    checks.push({
      id: 'log-store',
      status: 'error',
      summary: (err as Error).message.slice(0, 200),
      fix: 'check RELAY_EVENT_STORE (host, port, database, user) and that the server is running',
    });
  } finally {
    await source.close();
  }
  return checks;
}
