import { relayVersion } from '../common/config/version';
import { CliError, EXIT, line, UsageError, type CliIo } from './io';
import { HELP, helpFor } from './usage';

type Command = (args: string[], io: CliIo) => number | Promise<number>;

/** Command path → handler. `start` loads Nest lazily, so the audit commands stay quick. */
const COMMANDS: Readonly<Record<string, Command>> = {
  'relay start': async (args, io) => (await import('./start')).startCommand(args, io),
  'relay pair': async (args, io) => (await import('./pair')).pairCommand(args, io),
  'relay devices': async (args, io) => (await import('./devices')).devicesCommand(args, io),
  'relay blocks': async (args, io) => (await import('./blocks')).blocksCommand(args, io),
  'relay console': async (args, io) => (await import('./console')).consoleCommand(args, io),
  'relay events replay': async (args, io) => (await import('./events')).replayCommand(args, io),
  'relay events verify': async (args, io) => (await import('./events')).verifyCommand(args, io),
  'relay events tail': async (args, io) => (await import('./events-tail')).tailCommand(args, io),
  'relay events checkpoint': async (args, io) => (await import('./checkpoint')).checkpointCommand(args, io),
  'relay witness': async (args, io) => (await import('./witness')).witnessCommand(args, io),
  'relay events vkey': async (args, io) => (await import('./proof')).vkeyCommand(args, io),
  'relay events proof': async (args, io) => (await import('./proof')).proofCommand(args, io),
  'relay events public-key': async (args, io) => (await import('./checkpoint')).publicKeyCommand(args, io),
  'relay events forget': async (args, io) => (await import('./forget')).forgetCommand(args, io),
  'relay events prune': async (args, io) => (await import('./prune')).pruneCommand(args, io),
  'relay events export': async (args, io) => (await import('./events-copy')).exportCommand(args, io),
  'relay events import': async (args, io) => (await import('./events-copy')).importCommand(args, io),
  'relay backup': async (args, io) => (await import('./backup')).backupCommand(args, io),
  'relay restore': async (args, io) => (await import('./backup')).restoreCommand(args, io),
  'relay insecure-api-key': async (args, io) => (await import('./security')).insecureApiKeyCommand(args, io),
  'relay update-check': async (args, io) => (await import('./update-check')).updateCheckCommand(args, io),
  'relay compat': async (args, io) => (await import('./compat')).compatCommand(args, io),
  'relay profiles': async (args, io) => (await import('./profiles')).profilesCommand(args, io),
  'relay doctor': async (args, io) => (await import('./doctor')).doctorCommand(args, io),
  'relay service print': async (args, io) => (await import('./service')).servicePrintCommand(args, io),
  'relay service install': async (args, io) => (await import('./service')).serviceInstallCommand(args, io),
  'relay standby init': async (args, io) => (await import('./standby')).standbyInitCommand(args, io),
  'relay mcp': async (args, io) => (await import('./mcp')).mcpCommand(args, io),
  'relay secrets': async (args, io) => (await import('./secrets')).secretsCommand(args, io),
  reach: async (args, io) => (await import('./reach')).reachCommand(args, io),
  'reach host-entry': async (args, io) => (await import('./reach')).hostEntryCommand(args, io),
  'phone-sim': async (args, io) => (await import('./phone-sim')).runPhoneSim(args, (l) => line(io.stdout, l)),
};

/** Every command path (`relay start`, `relay events tail`...): what the help must list. */
export const COMMAND_PATHS: readonly string[] = Object.keys(COMMANDS);

const GROUPS = new Set(['relay', 'relay events', 'relay service', 'relay standby']);

const isHelpFlag = (a: string) => a === '--help' || a === '-h';

/** Splits argv into the longest known command path and its arguments. */
function route(argv: string[]): { path: string; args: string[] } {
  let path = '';
  let i = 0;
  while (i < argv.length && !argv[i].startsWith('-')) {
    const next = path ? `${path} ${argv[i]}` : argv[i];
    if (!(next in COMMANDS) && !GROUPS.has(next)) break;
    path = next;
    i++;
  }
  return { path, args: argv.slice(i) };
}

/** The help first and the reason last, so the line that says what was wrong is the one left on screen. */
function usageError(io: CliIo, message: string, command: string): number {
  line(io.stderr, helpFor(command));
  line(io.stderr);
  line(io.stderr, `svc: ${message}`);
  return EXIT.usage;
}

/** The whole CLI: returns the exit status; never throws for an operator's mistake. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  if (argv.length === 0) return usageError(io, 'a command is required', '');
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    line(io.stdout, relayVersion());
    return EXIT.ok;
  }
  if (argv[0] === 'help' || (argv.length === 1 && isHelpFlag(argv[0]))) {
    const topic = argv.slice(1).join(' ');
    if (topic && !(topic in HELP)) return usageError(io, `no help for "${topic}"`, '');
    line(io.stdout, helpFor(topic));
    return EXIT.ok;
  }
  const { path, args } = route(argv);
  if (args.some(isHelpFlag)) {
    line(io.stdout, helpFor(path));
    return EXIT.ok;
  }
  const command = COMMANDS[path];
  if (!command) {
    const word = args[0];
    if (word === undefined) return usageError(io, path ? `"svc ${path}" needs a command` : 'a command is required', path);
    return usageError(io, word.startsWith('-') ? `unknown option "${word}"` : `unknown command "${path ? path + ' ' : ''}${word}"`, path);
  }
  try {
    return await command(args, io);
  } catch (err) {
    if (err instanceof UsageError) return usageError(io, err.message, err.command);
    if (err instanceof CliError) {
      line(io.stderr, `svc ${path}: ${err.message}`);
      return err.exitCode;
    }
    // Another relay holding the log is the operator's situation, not a bug: one sentence, no stack (by name:
    // importing @svc/events here would load the log code for every command).
    const name = (err as Error)?.name;
    if (name === 'LogLockedError' || name === 'PgLogLockedError') {
      line(
        io.stderr,
        `svc ${path}: ${(err as Error).message}: stop that relay first, or ask it instead (svc relay devices, svc relay events forget ask the running relay)`,
      );
      return EXIT.failed;
    }
    line(io.stderr, `svc ${path}: unexpected error: ${(err as Error)?.stack ?? String(err)}`);
    return EXIT.failed;
  }
}

/** `bin/svc`: the real process, with SIGINT/SIGTERM turned into a clean stop of long-running commands. */
export function run(argv: string[] = process.argv.slice(2)): void {
  const stop = new AbortController();
  // A command that reads io.signal (start, tail --follow) stops itself cleanly on the first signal;
  // any other command (or a second signal) just exits.
  let graceful = false;
  let signals = 0;
  const onSignal = (name: NodeJS.Signals) => {
    signals++;
    if (!graceful || signals > 1) {
      if (graceful) process.stderr.write(`svc: second ${name}, exiting now\n`);
      process.exit(name === 'SIGTERM' ? 143 : 130);
    }
    stop.abort(name);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0); // `svc relay events tail | head` closed the pipe
  });
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    get signal() {
      graceful = true;
      return stop.signal;
    },
  };
  void main(argv, io).then((code) => {
    process.exitCode = code;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // Whatever still holds the loop open (a stray timer, a socket) must not keep a stopped CLI alive.
    setTimeout(() => process.exit(code), 3000).unref();
  });
}

if (require.main === module) run();
