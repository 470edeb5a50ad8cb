import { checkSecretName, DomainError, SECRET_VALUE_MAX } from '@svc/domain';
import { EXIT, line, parseFlagsAndPositionals, UsageError, type CliIo } from './io';
import { callConsole, relayEndpoint } from './relay-client';

const COMMAND = 'relay secrets';

type Listed = { name: string; created: number; updated: number; last_used: number | null };

const when = (epoch: number | null) => (epoch === null ? 'never' : new Date(epoch * 1000).toISOString().replace('.000Z', 'Z'));

/**
 * `svc relay secrets list | set NAME | forget NAME`: the named secrets an agent types without seeing
 * (MCP android_type_secret), through the running relay's console API with the home's operator key. A value
 * is never an argument (the process list and the shell's history would keep it): `set` reads it from stdin,
 * or prompts for it without echo on a terminal.
 */
export async function secretsCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlagsAndPositionals(COMMAND, args, { json: { type: 'boolean' } });
  const [action = 'list', name, ...rest] = positionals;
  // Never echoed: what was typed here may be the value itself.
  if (rest.length > 0) throw new UsageError('too many arguments: a value is read from stdin, never from the command line', COMMAND);
  const endpoint = relayEndpoint(io.env);
  if (action === 'list') {
    if (name !== undefined) throw new UsageError('list takes no NAME', COMMAND);
    const body = (await callConsole(endpoint, io.env, 'GET', '/console/api/secrets')) as { secrets: Listed[]; max: number };
    if (values.json) line(io.stdout, JSON.stringify(body));
    else if (body.secrets.length === 0) line(io.stdout, `no secrets (set one: svc relay secrets set NAME; at most ${body.max})`);
    else for (const s of body.secrets) line(io.stdout, `${s.name}  set ${when(s.updated)}  last used ${when(s.last_used)}`);
    return EXIT.ok;
  }
  if (action !== 'set' && action !== 'forget') throw new UsageError('the action is list, set NAME or forget NAME', COMMAND);
  if (name === undefined) throw new UsageError(`${action} needs a NAME`, COMMAND);
  try {
    checkSecretName(name);
  } catch (err) {
    if (err instanceof DomainError) throw new UsageError(err.message, COMMAND);
    throw err;
  }
  if (action === 'forget') {
    const r = (await callConsole(endpoint, io.env, 'POST', '/console/api/secrets/forget', { name })) as { keys: number; seq: number };
    if (values.json) line(io.stdout, JSON.stringify(r));
    else line(io.stdout, `forgot the secret "${name}": its value's key destroyed (event #${r.seq}); the records stay, unreadable`);
    return EXIT.ok;
  }
  const value = await readValue(io, name);
  const r = (await callConsole(endpoint, io.env, 'POST', '/console/api/secrets', { name, value })) as { replaced: boolean; seq: number };
  if (values.json) line(io.stdout, JSON.stringify(r));
  else
    line(
      io.stdout,
      `${r.replaced ? 'replaced' : 'registered'} the secret "${name}" (sealed in event #${r.seq}); agents type it with android_type_secret`,
    );
  return EXIT.ok;
}

/** The value: one line from stdin (a pipe or a file), or typed at a prompt that echoes nothing. */
async function readValue(io: CliIo, name: string): Promise<string> {
  const stdin = io.stdin ?? process.stdin;
  const tty = stdin.isTTY === true && typeof stdin.setRawMode === 'function';
  if (tty) io.stderr.write(`value of "${name}" (not shown): `);
  let text = '';
  let done = false;
  try {
    if (tty) stdin.setRawMode!(true);
    for await (const chunk of stdin) {
      for (const ch of typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8')) {
        if (ch === '\n' || ch === '\r') {
          done = true;
          break;
        }
        if (tty && ch === '\u0003') throw new UsageError('cancelled', COMMAND);
        if (tty && (ch === '\u007f' || ch === '\b')) text = text.slice(0, -1);
        else text += ch;
        // Bounded: a value is at most SECRET_VALUE_MAX characters, whatever stdin holds.
        if (text.length > SECRET_VALUE_MAX) throw new UsageError(`a secret's value is at most ${SECRET_VALUE_MAX} characters`, COMMAND);
      }
      if (done) break;
    }
  } finally {
    if (tty) {
      stdin.setRawMode!(false);
      io.stderr.write('\n');
    }
    if ('pause' in stdin && typeof stdin.pause === 'function') stdin.pause();
  }
  if (text.length === 0)
    throw new UsageError('no value: pipe it in (printf %s "$VALUE" | svc relay secrets set NAME) or type it at the prompt', COMMAND);
  return text;
}
