import { CHANNELS, DomainError, formatDuration, isGrantChannel, normalizeCode, parseDuration } from '@svc/domain';
import { pairingDefaultsText } from '@svc/events/grant-channels';
import * as QRCode from 'qrcode';
import { colours, EXIT, line, parseFlags, UsageError, type CliIo } from './io';
import { relayEndpoint, relayRefused, relayUnreachable, requestJson, type Answer, type RelayEndpoint } from './relay-client';

const COMMAND = 'relay pair';

export type PairRequest = { ttl_seconds?: number; grants?: Record<string, string | false>; dashboard_url?: string };

/** `--ttl 7d --grants terminal=1d,bridge=off` → the body of `POST /pairing/mint`. */
export function pairRequest(opts: { ttl?: string; grants?: string; dashboardUrl?: string }): PairRequest {
  const body: PairRequest = {};
  try {
    if (opts.ttl !== undefined) body.ttl_seconds = parseDuration(opts.ttl, '--ttl') ?? 0;
    if (opts.grants !== undefined) {
      const grants: Record<string, string | false> = {};
      for (const pair of opts.grants
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const m = /^([a-z:]+)=(.+)$/i.exec(pair);
        if (!m) throw new UsageError(`--grants: "${pair}" is not <channel>=<duration>`, COMMAND);
        const [, channel, value] = m;
        if (!isGrantChannel(channel)) throw new UsageError(`--grants: unknown channel "${channel}" (channels: ${CHANNELS.join(', ')})`, COMMAND);
        if (channel in grants) throw new UsageError(`--grants: "${channel}" given twice`, COMMAND);
        if (value === 'off' || value === 'none') grants[channel] = false;
        else {
          parseDuration(value, `--grants ${channel}`);
          grants[channel] = value;
        }
      }
      if (Object.keys(grants).length === 0) throw new UsageError('--grants: give at least one <channel>=<duration>', COMMAND);
      body.grants = grants;
    }
  } catch (err) {
    if (err instanceof DomainError) throw new UsageError(err.message, COMMAND);
    throw err;
  }
  if (opts.dashboardUrl !== undefined) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(opts.dashboardUrl).protocol);
    } catch {
      ok = false;
    }
    if (!ok) throw new UsageError(`--dashboard-url ${opts.dashboardUrl}: an http(s) URL`, COMMAND);
    body.dashboard_url = opts.dashboardUrl;
  }
  return body;
}

/**
 * `qr_payload` is the QR's JSON text (what the app scans); `pairing_url` the paste-able form (in the
 * relay's spelling); `warning` when no phone can reach the QR's routes (phone-reach.ts).
 */
type MintAnswer = { ok: true; code: string; pairing_url: string; expires_at: number; relay_url: string; qr_payload: string; warning?: string };

export async function pairCommand(args: string[], io: CliIo): Promise<number> {
  const v = parseFlags(COMMAND, args, {
    ttl: { type: 'string' },
    grants: { type: 'string' },
    'dashboard-url': { type: 'string' },
    json: { type: 'boolean' },
    'no-qr': { type: 'boolean' },
    'register-code': { type: 'string' },
  });
  if (v['register-code'] !== undefined) {
    if (v['dashboard-url'] !== undefined || v['no-qr']) throw new UsageError('--register-code takes only --ttl, --grants and --json', COMMAND);
    return registerCodeCommand(v['register-code'], pairRequest({ ttl: v.ttl, grants: v.grants }), Boolean(v.json), io);
  }
  const body = pairRequest({ ttl: v.ttl, grants: v.grants, dashboardUrl: v['dashboard-url'] });
  const endpoint = relayEndpoint(io.env);

  await requireRelay(endpoint, io.env);
  let answer: Answer;
  try {
    answer = await requestJson(endpoint, 'POST', '/pairing/mint', body);
  } catch (err) {
    throw relayUnreachable(endpoint, err, io.env);
  }
  if (answer.status !== 200) {
    const refused = relayRefused(endpoint, answer, io.env, 'the relay refused to mint a code');
    if (answer.status === 403)
      refused.message += '\nminting is a loopback route: run this on the relay host, against a relay bound to 0.0.0.0 or 127.0.0.1 (RELAY_HOST).';
    throw refused;
  }
  const mint = answer.body as MintAnswer;
  if (v.json) {
    line(io.stdout, JSON.stringify(mint, null, 2));
    return EXIT.ok;
  }

  const c = colours(io.stdout, io.env);
  const out = (s = '') => line(io.stdout, s);
  if (!v['no-qr']) {
    // ANSI blocks on a terminal; plain UTF-8 half blocks when redirected (no escape codes in a file).
    // The app's scanner reads raw JSON only (QrPairingScanner.kt parseHermesPairingQr): the QR holds
    // qr_payload itself, not the hermes-relay:// URL (that one is for pasting into the desktop CLI).
    const qr = await QRCode.toString(
      mint.qr_payload,
      io.stdout.isTTY ? { type: 'terminal', small: true, errorCorrectionLevel: 'L' } : { type: 'utf8', errorCorrectionLevel: 'L' },
    );
    out('Scan with the svc app to pair this phone:');
    out();
    out(qr.replace(/(?<!\n)\n+$/, ''));
    out();
  }
  const expires = new Date(mint.expires_at * 1000);
  const minutes = Math.max(0, Math.round((expires.getTime() - Date.now()) / 60_000));
  out(`  ${c.bold('code')}      ${c.bold(mint.code)}   ${c.dim('(type it in the app if the camera cannot scan)')}`);
  out(`  ${c.bold('relay')}     ${mint.relay_url}`);
  if (mint.warning) out(`  ${c.yellow('warning')}   ${c.yellow(mint.warning)}`);
  out(`  ${c.bold('expires')}   ${expires.toISOString().replace('.000Z', 'Z')} (in ${minutes} min; one use)`);
  printTerms(out, c, body, `defaults (${pairingDefaultsText().grants}; no desktop unless --grants desktop=7d; all clamped to the session)`);
  out(`  ${c.bold('url')}       ${mint.pairing_url}`);
  return EXIT.ok;
}

/** The session and grant lines of a code's terms, as `pair` and `pair --register-code` print them. */
function printTerms(out: (s?: string) => void, c: ReturnType<typeof colours>, terms: PairRequest, defaults: string): void {
  out(
    `  ${c.bold('session')}   ${terms.ttl_seconds === undefined ? `${pairingDefaultsText().session} (default)` : formatDuration(terms.ttl_seconds === 0 ? null : terms.ttl_seconds)}`,
  );
  const grants = terms.grants
    ? Object.entries(terms.grants)
        .map(([ch, d]) => `${ch}=${d === false ? 'off' : d}`)
        .join(', ') + c.dim(' (other channels: defaults)')
    : defaults;
  out(`  ${c.bold('grants')}    ${grants}`);
}

/** The relay on this machine answers `/health`, or the operator is told how to start one. */
async function requireRelay(endpoint: RelayEndpoint, env: NodeJS.ProcessEnv): Promise<void> {
  try {
    const health = await requestJson(endpoint, 'GET', '/health');
    if (health.status !== 200 || (health.body as { status?: string })?.status !== 'ok') throw new Error(`GET /health answered ${health.status}`);
  } catch (err) {
    throw relayUnreachable(endpoint, err, env);
  }
}

/**
 * `svc relay pair --register-code CODE`: the phone shows a code it made (the app's manual pairing),
 * the operator types it here, and it is registered on the running relay (`POST /pairing/register`) with
 * the same --ttl/--grants terms a QR would carry.
 */
async function registerCodeCommand(raw: string, terms: PairRequest, json: boolean, io: CliIo): Promise<number> {
  const code = normalizeCode(raw);
  if (!code) {
    throw new UsageError(
      `--register-code: the code must be 6 characters A-Z or 0-9, as the phone shows it (got ${raw.trim().length} characters)`,
      COMMAND,
    );
  }
  const endpoint = relayEndpoint(io.env);
  await requireRelay(endpoint, io.env);
  let answer: Answer;
  try {
    answer = await requestJson(endpoint, 'POST', '/pairing/register', { code, ...terms });
  } catch (err) {
    throw relayUnreachable(endpoint, err, io.env);
  }
  if (answer.status !== 200 || (answer.body as { ok?: boolean })?.ok !== true) {
    const refused = relayRefused(endpoint, answer, io.env, 'the relay refused the code');
    if (answer.status === 403)
      refused.message += '\nregistering is a loopback route: run this on the relay host, against a relay bound to 0.0.0.0 or 127.0.0.1 (RELAY_HOST).';
    if (answer.status === 409)
      refused.message += '\nthis code is already registered and waiting for the phone: tap Connect in the app, or let the phone make a new code.';
    throw refused;
  }
  const reg = answer.body as { code: string; expires_at: number };
  if (json) {
    line(io.stdout, JSON.stringify(reg, null, 2));
    return EXIT.ok;
  }
  const c = colours(io.stdout, io.env);
  const out = (s = '') => line(io.stdout, s);
  const expires = new Date(reg.expires_at * 1000);
  out(`Code ${c.bold(reg.code)} registered on the relay at ${endpoint.url}.`);
  out(`  ${c.bold('expires')}   ${expires.toISOString().replace('.000Z', 'Z')} (10 minutes; one use)`);
  printTerms(out, c, terms, 'defaults');
  out();
  out(`On the phone: check that it still shows ${reg.code}, then tap Connect.`);
  return EXIT.ok;
}
