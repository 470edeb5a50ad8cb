import { plural } from '@svc/events';
import { svcHomeFrom } from '../common/config/config';
import { DEFAULT_WEBAPI_URL } from '../common/config/hosts';
import type { DoctorCheck, DoctorStatus } from './doctor-check';
import { eventLogChecks } from './doctor-event-log';
import { diskCheck, envFileCheck, tlsCheck } from './doctor-host-files';
import { listeningPorts, operatorChecks } from './doctor-operator';
import { secureLinkChecks, type SecureLinkHealth } from './doctor-secure-link';
import { EXIT, line, UsageError, colours, type CliIo } from './io';
import { relayEndpoint, requestJson, type RelayEndpoint } from './relay-client';

const COMMAND = 'relay doctor';

/**
 * Whether phones can reach what this relay's QRs name, as its Connectivity page says it (the operator's
 * console API, with the home's operator key). Null when the relay would not say (not running, another
 * home's key): the relay check already tells why.
 */
async function phoneReachCheck(endpoint: RelayEndpoint): Promise<DoctorCheck | null> {
  try {
    const a = await requestJson(endpoint, 'GET', '/console/api/connectivity', undefined, 3000);
    const listener = (a.body as { listener?: { advertised_url?: string; phone_warning?: string | null } } | null)?.listener;
    if (a.status !== 200 || !listener) return null;
    return listener.phone_warning
      ? { id: 'phone-reach', status: 'warn', summary: listener.phone_warning }
      : { id: 'phone-reach', status: 'ok', summary: `pairing QRs send phones to ${listener.advertised_url ?? '?'}` };
  } catch {
    return null;
  }
}

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

  // Can a phone use the QRs this relay mints (the Connectivity page's view, the pairing rule's words).
  if (endpointUrl) {
    const reach = await phoneReachCheck(relayEndpoint(env));
    if (reach) checks.push(reach);
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
  checks.push(tlsCheck(env));

  // The event log: its chain and its lock.
  checks.push(...(await eventLogChecks(home, env)));

  // Disk, and the service's environment file.
  checks.push(diskCheck(home), envFileCheck(home));

  const worst: DoctorStatus = checks.some((c) => c.status === 'error') ? 'error' : checks.some((c) => c.status === 'warn') ? 'warn' : 'ok';
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
