import type { SignInLinkAnswer } from '@svc/console-api';
import { EXIT, line, parseFlags, type CliIo } from './io';
import { callConsole, relayEndpoint } from './relay-client';

const COMMAND = 'relay console';

/**
 * `svc relay console`: a fresh one-time sign-in link for the console of the relay of this home (asked with
 * the home's operator key). Opened in a browser on this machine, it signs that browser in; used once,
 * good for 15 minutes. The start-up banner prints one too.
 */
export async function consoleCommand(args: string[], io: CliIo): Promise<number> {
  const values = parseFlags(COMMAND, args, { json: { type: 'boolean' } });
  const endpoint = relayEndpoint(io.env);
  const link = (await callConsole(endpoint, io.env, 'POST', '/console/api/session/links')) as SignInLinkAnswer;
  if (values.json) {
    line(io.stdout, JSON.stringify({ url: link.url, expires_at: link.expires_at }));
    return EXIT.ok;
  }
  line(io.stdout, link.url);
  line(
    io.stderr,
    `open it in a browser on this machine within 15 minutes (until ${new Date(link.expires_at * 1000).toISOString().slice(11, 19)} UTC); it works once`,
  );
  return EXIT.ok;
}
