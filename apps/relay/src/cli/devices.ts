import { plural } from '@svc/events';
import { colours, EXIT, line, parseFlagsAndPositionals, UsageError, type CliIo } from './io';
import { callConsole, relayEndpoint } from './relay-client';

const COMMAND = 'relay devices';

type Trust = { issued_at: number; expires_at: number; renewals: number; last_renewed_at: number | null; adopted: boolean } | null;
type Device = {
  token_prefix: string;
  device_name: string;
  device_id: string;
  client_surface: string;
  last_seen: number;
  expires_at: number | null;
  online: boolean;
  trusted_device: Trust;
};

const day = (epoch: number) => new Date(epoch * 1000).toISOString().slice(0, 10);

/** One word-wrapped table row per device: what an operator checks before revoking or ending a renewal. */
function renewal(t: Trust): string {
  if (!t) return 'none';
  const n = plural(t.renewals, 'renewal');
  return `until ${day(t.expires_at)}, ${n}${t.adopted ? ' (adopted)' : ''}`;
}

/**
 * `svc relay devices`: the paired devices of the relay on this machine (its loopback console API), with
 * each one's trusted-device renewal. `revoke PREFIX` ends a session and its renewal; `end-trust PREFIX`
 * ends only the renewal (the device keeps its session until it expires, then must pair again).
 */
export async function devicesCommand(args: string[], io: CliIo): Promise<number> {
  // parseArgs would call `-Xy1` an unknown option: say how to pass such a prefix instead.
  const [first, second] = args;
  if ((first === 'revoke' || first === 'end-trust') && second?.startsWith('-') && !['--', '--json', '--forget', '-h', '--help'].includes(second))
    throw new UsageError(
      `${second} reads as an option: a prefix that starts with "-" goes after "--" (svc relay devices ${first} -- ${second})`,
      COMMAND,
    );
  const { values, positionals } = parseFlagsAndPositionals(COMMAND, args, { json: { type: 'boolean' }, forget: { type: 'boolean' } });
  const endpoint = relayEndpoint(io.env);
  const [action, prefix, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`unexpected "${rest[0]}"`, COMMAND);
  if (action === 'revoke' || action === 'end-trust') {
    if (!prefix || !/^[A-Za-z0-9_-]{4,64}$/.test(prefix)) throw new UsageError(`${action} needs a token prefix (at least 4 characters)`, COMMAND);
    if (values.forget && action !== 'revoke') throw new UsageError('--forget goes with revoke', COMMAND);
    const payload = values.forget ? { forget: true } : {};
    const body = await callConsole(
      endpoint,
      io.env,
      'POST',
      `/console/api/sessions/${prefix}/${action === 'revoke' ? 'revoke' : 'end-trust'}`,
      payload,
    );
    if (values.json) line(io.stdout, JSON.stringify(body));
    else if (action === 'revoke') {
      const r = body as { revoked: string; forgotten_keys?: number };
      line(io.stdout, `revoked ${r.revoked}: its session and its renewal are over`);
      if (r.forgotten_keys !== undefined)
        line(io.stdout, `forgot its notification and Thread content: ${plural(r.forgotten_keys, 'data key')} destroyed`);
    } else line(io.stdout, `ended the renewal of ${(body as { device_id: string }).device_id}: its session stays until it expires`);
    return EXIT.ok;
  }
  if (action !== undefined) throw new UsageError(`unknown action "${action}" (list, revoke PREFIX, end-trust PREFIX)`, COMMAND);
  const { sessions } = (await callConsole(endpoint, io.env, 'GET', '/console/api/sessions')) as { sessions: Device[] };
  if (values.json) {
    line(io.stdout, JSON.stringify({ devices: sessions }));
    return EXIT.ok;
  }
  if (sessions.length === 0) {
    line(io.stdout, 'no paired devices; pair one with "svc relay pair"');
    return EXIT.ok;
  }
  const c = colours(io.stdout, io.env);
  const rows = sessions.map((s) => [
    s.token_prefix,
    s.device_name,
    s.client_surface,
    s.online ? 'online' : `seen ${day(s.last_seen)}`,
    s.expires_at === null ? 'never' : day(s.expires_at),
    renewal(s.trusted_device),
  ]);
  const head = ['PREFIX', 'NAME', 'SURFACE', 'STATUS', 'EXPIRES', 'RENEWAL'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  line(io.stdout, c.bold(fmt(head)));
  for (const r of rows) line(io.stdout, fmt(r));
  return EXIT.ok;
}
