import { CliError, EXIT, line, UsageError, type CliIo } from './io';
import { relayEndpoint, requestJson } from './pair';

const COMMAND = 'relay update-check';

type UpdateInfo = {
  current: string;
  /** Without a feed `current` is empty (the app would read a version as "up to date"); this holds it. */
  running_version?: string;
  reason?: string;
  latest: string | null;
  update_available: boolean;
  update_command: string | null;
  status: string;
  error?: string;
};

/** `svc relay update-check [--refresh] [--json]`: asks the running relay (`GET /relay/update-check` on loopback). */
export async function updateCheckCommand(args: string[], io: CliIo): Promise<number> {
  const json = args.includes('--json');
  const refresh = args.includes('--refresh');
  const other = args.find((a) => a !== '--json' && a !== '--refresh');
  if (other) throw new UsageError(other.startsWith('-') ? `unknown option ${other}` : `unexpected argument "${other}"`, COMMAND);
  const endpoint = relayEndpoint(io.env);
  let answer;
  try {
    answer = await requestJson(endpoint, 'GET', `/relay/update-check${refresh ? '?refresh=1' : ''}`, undefined, 10_000);
  } catch (err) {
    throw new CliError(
      `no relay answers at ${endpoint.url} (${(err as Error).message}).\nStart one with "svc relay start"; a relay on another port needs the same RELAY_HOST and RELAY_PORT here.`,
    );
  }
  if (answer.status !== 200) throw new CliError(`the relay refused: ${(answer.body as { error?: string })?.error ?? `answered ${answer.status}`}`);
  const u = answer.body as UpdateInfo;
  if (json) {
    line(io.stdout, JSON.stringify(u));
    return EXIT.ok;
  }
  if (u.status === 'behind')
    line(io.stdout, `svc relay ${u.current}: ${u.latest} is available${u.update_command ? ` (update: ${u.update_command})` : ''}`);
  else if (u.status === 'current') line(io.stdout, `svc relay ${u.current}: up to date (latest ${u.latest})`);
  else line(io.stdout, `svc relay ${u.current || u.running_version || '?'}: latest unknown${u.error || u.reason ? ` (${u.error ?? u.reason})` : ''}`);
  return EXIT.ok;
}
