import type { RateLimitBlocksView, UnblockAnswer } from '@svc/console-api';
import { plural } from '@svc/events';
import { colours, EXIT, line, parseFlagsAndPositionals, UsageError, type CliIo } from './io';
import { callConsole, relayEndpoint } from './relay-client';

const COMMAND = 'relay blocks';

const time = (epoch: number) => new Date(epoch * 1000).toISOString().slice(0, 19).replace('T', ' ');
const KIND = { code: 'bad pairing codes', token: 'bad session tokens' } as const;

/**
 * `svc relay blocks`: the rate limiter's blocks in force on the relay running on this machine (its loopback
 * console API); `unblock ADDRESS` lifts one (the event is written by the operator, as from the console).
 */
export async function blocksCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlagsAndPositionals(COMMAND, args, { json: { type: 'boolean' } });
  const endpoint = relayEndpoint(io.env);
  const [action, address, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`unexpected "${rest[0]}"`, COMMAND);
  if (action === 'unblock') {
    if (!address) throw new UsageError('unblock needs the address as listed (e.g. 198.51.100.7 or 2001:db8:1:2::/64)', COMMAND);
    const answer = (await callConsole(endpoint, io.env, 'POST', '/console/api/pairing/unblock', { address })) as UnblockAnswer;
    if (values.json) line(io.stdout, JSON.stringify(answer));
    else line(io.stdout, `unblocked ${answer.unblocked}: it may try again at once`);
    return EXIT.ok;
  }
  if (action !== undefined) throw new UsageError(`unknown action "${action}" (list, unblock ADDRESS)`, COMMAND);
  const view = (await callConsole(endpoint, io.env, 'GET', '/console/api/pairing/blocks')) as RateLimitBlocksView;
  if (values.json) {
    line(io.stdout, JSON.stringify({ blocks: view.blocks }));
    return EXIT.ok;
  }
  if (view.blocks.length === 0) {
    line(io.stdout, 'no address is blocked');
    return EXIT.ok;
  }
  const c = colours(io.stdout, io.env);
  const rows = view.blocks.map((b) => [b.address, KIND[b.kind], `${time(b.since)} UTC`, `${time(b.until)} UTC`]);
  const head = ['ADDRESS', 'AFTER', 'SINCE', 'UNTIL'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  line(io.stdout, c.bold(fmt(head)));
  for (const r of rows) line(io.stdout, fmt(r));
  line(io.stdout, c.dim(`${plural(view.blocks.length, 'address', 'addresses')} blocked; "svc relay blocks unblock ADDRESS" lifts one`));
  return EXIT.ok;
}
