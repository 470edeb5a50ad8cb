import { EXIT, line, UsageError, type CliIo } from './io';
import { relayEndpoint, relayRefused, relayUnreachable, requestJson } from './relay-client';

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
    throw relayUnreachable(endpoint, err, io.env);
  }
  if (answer.status !== 200) throw relayRefused(endpoint, answer, io.env, 'the relay refused');
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
