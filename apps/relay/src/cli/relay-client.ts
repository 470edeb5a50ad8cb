import { liveLockHolder } from '@svc/events';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { svcHomeFrom } from '../common/config/config';
import { ConfigError, envNumber, PORT } from '../common/config/config-env';
import { DEFAULT_PORT, dialHost } from '../common/config/hosts';
import { OPERATOR_KEY_HEADER, readOperatorKey } from '../common/auth/operator-key';
import { CliError } from './io';

/**
 * The relay a command talks to, and how it proves it is the operator: `url` (and the relay's own
 * certificate as the only trusted CA over TLS), the home's operator key, and where the address came from.
 */
export type RelayEndpoint = { url: string; ca?: Buffer; operatorKey?: string; found: 'home' | 'environment' };

/**
 * The relay of the home the CLI is pointed at (SVC_HOME): the running relay that holds the home's lock
 * says where it answers, whatever its port. With none running there, spec 4.13: RELAY_HOST/RELAY_PORT
 * (0.0.0.0 -> 127.0.0.1). Either way the home's operator key goes with every request (operator-key.ts).
 */
export function relayEndpoint(env: NodeJS.ProcessEnv): RelayEndpoint {
  const dir = path.join(svcHomeFrom(env), 'relay');
  const operatorKey = readOperatorKey(dir) ?? undefined;
  const holder = liveLockHolder(dir);
  if (holder?.url) {
    if (!holder.certFile) return { url: holder.url, operatorKey, found: 'home' };
    return { url: holder.url, ca: readCert(holder.certFile), operatorKey, found: 'home' };
  }
  const host = dialHost(env.RELAY_HOST || '127.0.0.1');
  let port: number;
  try {
    port = envNumber(env, 'RELAY_PORT', { ...PORT, default: DEFAULT_PORT.relay });
  } catch (err) {
    throw err instanceof ConfigError ? new CliError(err.message) : err;
  }
  const tls = Boolean(env.RELAY_SSL_CERT && env.RELAY_SSL_KEY);
  if (!tls) return { url: `http://${host}:${port}`, operatorKey, found: 'environment' };
  return { url: `https://${host}:${port}`, ca: readCert(env.RELAY_SSL_CERT!), operatorKey, found: 'environment' };
}

function readCert(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new CliError(
      `the relay's TLS certificate ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): run this as the relay's user`,
    );
  }
}

export type Answer = { status: number; body: unknown };

/** A JSON request to the local relay. Over TLS the relay's own certificate is the only trusted CA. */
export function requestJson(endpoint: RelayEndpoint, method: string, route: string, body?: unknown, timeoutMs = 5000): Promise<Answer> {
  const url = new URL(route, endpoint.url);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method,
        headers: {
          accept: 'application/json',
          ...(endpoint.operatorKey ? { [OPERATOR_KEY_HEADER]: endpoint.operatorKey } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
        timeout: timeoutMs,
        ...(endpoint.ca ? { ca: endpoint.ca, checkServerIdentity: () => undefined } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * A relay that did not answer, in one sentence with what to do: the home's running relay is named by its
 * lock (pid, URL); otherwise where RELAY_HOST/RELAY_PORT pointed.
 */
export function relayUnreachable(endpoint: RelayEndpoint, err: unknown, env: NodeJS.ProcessEnv): CliError {
  const why = (err as Error).message || (err as NodeJS.ErrnoException).code || String(err);
  if (endpoint.found === 'home')
    return new CliError(
      `the relay of ${svcHomeFrom(env)} holds its home but does not answer at ${endpoint.url} (${why}): wait until it has started, or restart it`,
    );
  return new CliError(
    `no relay answers at ${endpoint.url} (${why}): none runs with the home ${svcHomeFrom(env)}, so RELAY_HOST/RELAY_PORT were dialled; start one with "svc relay start", or point SVC_HOME at the home of the relay you mean`,
  );
}

/** A refusal as one sentence: the relay's own error and code, and for a refused operator key what to do. */
export function relayRefused(endpoint: RelayEndpoint, answer: Answer, env: NodeJS.ProcessEnv, what?: string): CliError {
  const b = answer.body as { error?: unknown; code?: unknown } | null;
  const code = typeof b?.code === 'string' ? b.code : null;
  if (code === 'auth.operator_key_required') {
    const home = svcHomeFrom(env);
    return new CliError(
      endpoint.operatorKey
        ? `the relay at ${endpoint.url} refused the operator key of ${home}: point SVC_HOME at that relay's home`
        : `the relay at ${endpoint.url} needs the operator key, and ${path.join(home, 'relay', 'operator.key')} cannot be read: run this as the relay's user with its SVC_HOME`,
    );
  }
  const error = typeof b?.error === 'string' ? b.error : `HTTP ${answer.status}`;
  return new CliError(`${what ? `${what}: ` : ''}${error}${code ? ` (${code})` : ''}`);
}

/** A console API call of the relay of this home, as the operator; a refusal or silence becomes the CLI's one-sentence error. */
export async function callConsole(
  endpoint: RelayEndpoint,
  env: NodeJS.ProcessEnv,
  method: string,
  route: string,
  payload: object = {},
): Promise<unknown> {
  let answer;
  try {
    answer = await requestJson(endpoint, method, route, method === 'POST' ? payload : undefined);
  } catch (err) {
    throw relayUnreachable(endpoint, err, env);
  }
  if (answer.status !== 200) throw relayRefused(endpoint, answer, env);
  return answer.body;
}
