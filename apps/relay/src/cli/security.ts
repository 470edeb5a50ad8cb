import { EXIT, line, UsageError, type CliIo } from './io';
import { relayEndpoint, relayRefused, relayUnreachable, requestJson } from './relay-client';

const COMMAND = 'relay insecure-api-key';

type Security = { allow_insecure_api_bearer: boolean; trust_proxy_headers: boolean; tls: boolean; api_key_configured: boolean };

/**
 * `svc relay insecure-api-key [status|on|off] [--json]` (spec 4.13): reads or flips the running relay's
 * escape hatch for plain-HTTP API-bearer voice auth from other hosts (GET/PATCH /relay/security on
 * loopback). `on` lasts until the relay restarts; each change is an event in its log.
 */
export async function insecureApiKeyCommand(args: string[], io: CliIo): Promise<number> {
  const json = args.includes('--json');
  const rest = args.filter((a) => a !== '--json');
  const unknown = rest.find((a) => a.startsWith('-'));
  if (unknown) throw new UsageError(`unknown option ${unknown}`, COMMAND);
  if (rest.length > 1) throw new UsageError(`one action at most, got "${rest.join(' ')}"`, COMMAND);
  const action = rest[0] ?? 'status';
  if (!['status', 'on', 'off'].includes(action)) throw new UsageError(`the action is status, on or off, not "${action}"`, COMMAND);

  const endpoint = relayEndpoint(io.env);
  let answer;
  try {
    answer =
      action === 'status'
        ? await requestJson(endpoint, 'GET', '/relay/security')
        : await requestJson(endpoint, 'PATCH', '/relay/security', { allow_insecure_api_bearer: action === 'on' });
  } catch (err) {
    throw relayUnreachable(endpoint, err, io.env);
  }
  if (answer.status !== 200) throw relayRefused(endpoint, answer, io.env, 'the relay refused');
  const s = answer.body as Security;
  if (json) {
    line(io.stdout, JSON.stringify(s));
    return EXIT.ok;
  }
  line(
    io.stdout,
    s.allow_insecure_api_bearer
      ? 'insecure API-key voice auth: ON (other hosts may send the API key over plain HTTP until the relay restarts)'
      : 'insecure API-key voice auth: off (from other hosts the API key is accepted only over HTTPS)',
  );
  line(
    io.stdout,
    `  TLS on the relay: ${s.tls ? 'yes' : 'no'}; trusts X-Forwarded-Proto: ${s.trust_proxy_headers ? 'yes (RELAY_TRUST_PROXY_HEADERS=1)' : 'no'}; API key configured: ${s.api_key_configured ? 'yes' : 'no (API_SERVER_KEY unset: only paired phones use voice)'}`,
  );
  return EXIT.ok;
}
