import { ReadModels } from '@svc/domain';
import { encodeRecord, GENESIS_HASH, listSegments, replayLog } from '@svc/events';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../apps/relay/src/cli/main';
import { formatLine } from '../../apps/relay/src/cli/pretty-log';
import { decodePairing } from '../../apps/relay/src/pairing/qr-payload';
import jsQR from 'jsqr';
import { bearer, nextCode, pairPhone, Phone, registerCode, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';

/** Reads a QR drawn with UTF-8 half blocks (two rows of modules per line) back to its text. */
function readTextQr(drawing: string): string | null {
  const rows = drawing.split('\n').filter((l) => /[▀▄█]/.test(l));
  const width = Math.max(...rows.map((r) => [...r].length));
  const scale = 4;
  const w = (width + 8) * scale;
  const h = (rows.length * 2 + 8) * scale;
  const px = new Uint8ClampedArray(w * h * 4).fill(255);
  rows.forEach((row, y) =>
    [...row].forEach((ch, x) => {
      const top = ch === '█' || ch === '▀';
      const bottom = ch === '█' || ch === '▄';
      for (const [on, dy] of [
        [top, 0],
        [bottom, 1],
      ] as const) {
        if (!on) continue;
        for (let i = 0; i < scale; i++)
          for (let j = 0; j < scale; j++)
            px.fill(
              0,
              (((y * 2 + dy + 4) * scale + i) * w + (x + 4) * scale + j) * 4,
              (((y * 2 + dy + 4) * scale + i) * w + (x + 4) * scale + j) * 4 + 3,
            );
      }
    }),
  );
  return jsQR(px, w, h, { inversionAttempts: 'attemptBoth' })?.data ?? null;
}

/** Runs the CLI in-process against real files and a real relay, capturing what it prints. */
const lines = (s: string) => s.split('\n').filter(Boolean);
const untilTrue = async (check: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('svc CLI: help and usage', () => {
  it('prints help for every command on stdout with exit 0', async () => {
    for (const args of [['--help'], ['help'], ['-h'], ['help', 'relay'], ['relay', '--help']]) {
      const r = await svc(args);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toContain('svc relay');
    }
    for (const [args, words] of [
      [
        ['relay', 'start', '--help'],
        ['--no-ssl', '--allow-insecure-api-key', 'RELAY_PORT'],
      ],
      [
        ['help', 'relay', 'pair'],
        ['--ttl', '--grants'],
      ],
      [
        ['relay', 'events', 'replay', '-h'],
        ['--log', '--json'],
      ],
      [['help', 'relay', 'events', 'verify'], ['first bad record']],
      [
        ['relay', 'events', 'tail', '--help'],
        ['--follow', '--type', '--limit'],
      ],
    ] as const) {
      const r = await svc([...args]);
      expect(r.code).toBe(0);
      for (const w of words) expect(r.stdout).toContain(w);
    }
    const v = await svc(['--version']);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([
    [[], 'a command is required'],
    [['relay'], '"svc relay" needs a command'],
    [['bogus'], 'unknown command "bogus"'],
    [['relay', 'bogus'], 'unknown command "relay bogus"'],
    [['relay', 'events', 'rewrite'], 'unknown command "relay events rewrite"'],
    [['relay', 'start', '--bogus'], "Unknown option '--bogus'"],
    [['relay', 'start', '--port', '99999'], '--port 99999'],
    [['relay', 'start', '--shell', 'bash'], 'absolute path'],
    [['relay', 'start', 'extra'], 'extra'],
    [['relay', 'pair', '--ttl', 'soon'], 'not a duration'],
    [['relay', 'pair', '--grants', 'telepathy=1d'], 'unknown channel "telepathy"'],
    [['relay', 'pair', '--grants', 'terminal'], 'not <channel>=<duration>'],
    [['relay', 'events', 'tail', '--limit', '-3'], '--limit'],
    [['relay', 'events', 'replay', '--at', 'yesterday'], '--at yesterday'],
    [['help', 'relay', 'nope'], 'no help for "relay nope"'],
  ])('svc %j: usage on stderr, exit 2', async (args, message) => {
    const r = await svc(args as string[], { SVC_HOME: tempHome() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('Usage:');
  });
});

describe('svc relay pair', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home, RELAY_HOST: '127.0.0.1', RELAY_PORT: String(relay.port) };
  });
  afterAll(() => relay?.close());

  it('mints a code on the running relay; the QR URL pairs a phone with the grants asked for', async () => {
    const r = await svc(['relay', 'pair', '--ttl', '7d', '--grants', 'terminal=1d,bridge=off', '--json'], env);
    expect(r.code).toBe(0);
    const mint = JSON.parse(r.stdout) as { code: string; pairing_url: string; expires_at: number };
    const payload = decodePairing(mint.pairing_url);
    expect(payload.relay.code).toBe(mint.code);
    expect(payload.relay.ttl_seconds).toBe(7 * 86400);
    const now = relay.clock.now().getTime() / 1000;
    expect(mint.expires_at).toBe(now + 600);

    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth({ pairing_code: mint.code, device_name: 'CLI phone', device_id: 'cli-1' });
    expect(ok.type).toBe('auth.ok');
    expect(ok.payload.expires_at).toBe(now + 7 * 86400);
    const grants = ok.payload.grants as Record<string, number | null>;
    expect(grants.terminal).toBe(now + 86400);
    expect(grants).not.toHaveProperty('bridge');
    expect(grants.chat).toBe(now + 7 * 86400);
    phone.close();
  });

  it('prints the QR, the code, the svc-relay:// URL and the expiry for the operator (never into the relay log)', async () => {
    const r = await svc(['relay', 'pair'], { ...env, RELAY_HOST: '0.0.0.0' });
    expect(r.code).toBe(0);
    const code = /code\s+([A-Z0-9]{6})/.exec(r.stdout)?.[1];
    expect(code).toBeDefined();
    expect(r.stdout).toMatch(/[▀▄█]{10}/);
    // The QR holds the JSON the app scans (raw JSON with host and relay {url, code}), not the URL.
    const scanned = readTextQr(r.stdout);
    expect(scanned).not.toBeNull();
    expect(JSON.parse(scanned!)).toMatchObject({ host: expect.any(String), key: '', relay: { code } });
    expect(r.stdout).toContain('svc-relay://pair?payload=');
    expect(r.stdout).toMatch(/expires\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in \d+ min; one use\)/);
    expect(r.stdout).not.toContain('\x1b['); // not a terminal: no escape codes
    expect(relay.logs.join('')).not.toContain(code!);
    const events = fs.readFileSync(path.join(relay.home, 'relay', 'events', fs.readdirSync(path.join(relay.home, 'relay', 'events'))[0]), 'utf8');
    expect(events).not.toContain(`"${code}"`);
  });

  it('--register-code registers the code the phone shows, with --ttl and --grants; the phone then pairs with it', async () => {
    const r = await svc(['relay', 'pair', '--register-code', ' ph0ne1 ', '--ttl', '2d', '--grants', 'bridge=off'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Code PH0NE1 registered on the relay');
    expect(r.stdout).toContain('tap Connect');
    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth({ pairing_code: 'PH0NE1', device_id: 'register-code-phone' });
    expect(ok.type).toBe('auth.ok');
    const now = relay.clock.now().getTime() / 1000;
    expect(ok.payload.expires_at).toBe(now + 2 * 86400);
    expect(ok.payload.grants).not.toHaveProperty('bridge');
    phone.close();

    const json = await svc(['relay', 'pair', '--register-code', 'PH0NE2', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, code: 'PH0NE2', expires_at: now + 600 });
    // Registered and not used yet: the relay refuses it again, and the CLI says what to do.
    const again = await svc(['relay', 'pair', '--register-code', 'PH0NE2'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already registered');
    expect(again.stderr).toContain('tap Connect');
  });

  it('--register-code: a malformed code is a usage error (exit 2); no relay is exit 1 with how to start one', async () => {
    for (const bad of ['ABC', 'ABCDEFG', 'AB-D12', '']) {
      const r = await svc(['relay', 'pair', '--register-code', bad], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--register-code: the code must be 6 characters A-Z or 0-9');
    }
    const mixed = await svc(['relay', 'pair', '--register-code', 'ABC123', '--no-qr'], env);
    expect(mixed.code).toBe(2);
    const none = await svc(['relay', 'pair', '--register-code', 'ABC123'], { ...env, SVC_HOME: tempHome(), RELAY_PORT: '1' });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no relay answers at http://127.0.0.1:1 (connect ECONNREFUSED');
    expect(none.stderr).toContain('svc relay start');
  });

  it('says clearly when no relay answers /health, and names RELAY_HOST/RELAY_PORT', async () => {
    const r = await svc(['relay', 'pair'], { ...env, SVC_HOME: tempHome(), RELAY_PORT: '1' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('no relay answers at http://127.0.0.1:1 (connect ECONNREFUSED');
    expect(r.stderr).toContain('RELAY_PORT');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it("finds the relay of its home on any port (the home's lock says where), whatever RELAY_PORT says", async () => {
    const r = await svc(['relay', 'pair', '--json'], { SVC_HOME: relay.home, RELAY_PORT: '1' });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, code: expect.stringMatching(/^[A-Z0-9]{6}$/) });
  });
});

describe('svc relay devices', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home, RELAY_HOST: '127.0.0.1', RELAY_PORT: String(relay.port) };
  });
  afterAll(() => relay?.close());

  it('lists paired devices with their renewal, ends a renewal and revokes a device, never printing a token', async () => {
    const empty = await svc(['relay', 'devices'], env);
    expect(empty).toMatchObject({ code: 0, stdout: expect.stringContaining('no paired devices') });
    const code = nextCode();
    await registerCode(relay, code);
    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth({ pairing_code: code, device_name: 'Pixel 9', device_id: 'dev-cli' });
    const token = ok.payload.session_token as string;
    const prefix = token.slice(0, 8);
    const list = await svc(['relay', 'devices'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/PREFIX\s+NAME\s+SURFACE\s+STATUS\s+EXPIRES\s+RENEWAL/);
    expect(list.stdout).toContain(prefix);
    expect(list.stdout).toContain('Pixel 9');
    expect(list.stdout).toMatch(/online\s+\d{4}-\d{2}-\d{2}\s+until \d{4}-\d{2}-\d{2}, 0 renewals/);
    expect(list.stdout).not.toContain(token);
    expect(list.stdout).not.toContain(ok.payload.refresh_token as string);
    const json = JSON.parse((await svc(['relay', 'devices', '--json'], env)).stdout) as { devices: Array<{ trusted_device: unknown }> };
    expect(json.devices[0].trusted_device).toMatchObject({ renewals: 0 });

    const end = await svc(['relay', 'devices', 'end-trust', '--', prefix], env);
    expect(end).toMatchObject({ code: 0, stdout: expect.stringContaining('ended the renewal of dev-cli') });
    expect((await svc(['relay', 'devices'], env)).stdout).toMatch(/\s+none\n/);
    const again = await svc(['relay', 'devices', 'end-trust', '--', prefix], env);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining('(trust.not_found)') });
    const revoke = await svc(['relay', 'devices', 'revoke', '--', prefix], env);
    expect(revoke).toMatchObject({ code: 0, stdout: expect.stringContaining(`revoked ${prefix}`) });
    expect(await phone.closed).toBe(4403);
    expect((await svc(['relay', 'devices', 'revoke', 'x'], env)).code).toBe(2);
    expect((await svc(['relay', 'devices', 'frobnicate'], env)).stderr).toContain('unknown action "frobnicate"');
  });

  it('says how to start a relay when none answers', async () => {
    const r = await svc(['relay', 'devices'], { SVC_HOME: tempHome(), RELAY_HOST: '127.0.0.1', RELAY_PORT: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no relay answers at http://127.0.0.1:1');
  });
});

describe('svc relay pair over TLS (RELAY_SSL_CERT/RELAY_SSL_KEY)', () => {
  /** A throwaway self-signed certificate for 127.0.0.1 (openssl is on Debian; .ci/run installs it). */
  function selfSigned(dir: string, name: string): { cert: string; key: string } {
    const cert = path.join(dir, `${name}.crt`);
    const key = path.join(dir, `${name}.key`);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=svc relay test',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'pipe' },
    );
    return { cert, key };
  }

  it('dials https with the relay certificate as the only trust anchor; a different certificate is refused', async () => {
    const dir = tempHome();
    const real = selfSigned(dir, 'relay');
    const other = selfSigned(dir, 'other');
    const relay = await startRelay({ env: { RELAY_SSL_CERT: real.cert, RELAY_SSL_KEY: real.key } });
    try {
      expect(relay.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const env = { SVC_HOME: relay.home, RELAY_HOST: '0.0.0.0', RELAY_PORT: String(relay.port), RELAY_SSL_CERT: real.cert, RELAY_SSL_KEY: real.key };
      const ok = await svc(['relay', 'pair', '--json'], env);
      expect(ok.code).toBe(0);
      const mint = JSON.parse(ok.stdout) as { relay_url: string; pairing_url: string };
      expect(mint.relay_url).toMatch(/^wss:\/\//);
      expect(decodePairing(mint.pairing_url).relay.url).toBe(mint.relay_url);

      // The home's lock names the certificate the relay serves: a stale RELAY_SSL_CERT here does not matter.
      const viaHome = await svc(['relay', 'pair', '--json'], { ...env, RELAY_SSL_CERT: other.cert, RELAY_SSL_KEY: other.key });
      expect(viaHome.code).toBe(0);
      // Dialled by RELAY_HOST/RELAY_PORT (no relay holds this other home), the given certificate is the only trust anchor.
      const pinned = await svc(['relay', 'pair'], { ...env, SVC_HOME: tempHome(), RELAY_SSL_CERT: other.cert, RELAY_SSL_KEY: other.key });
      expect(pinned.code).toBe(1);
      expect(pinned.stderr).toContain(`no relay answers at https://127.0.0.1:${relay.port}`);
      expect(pinned.stderr).toMatch(/certificate/i); // refused for the right reason: not the pinned certificate
      expect(pinned.stdout).toBe('');
    } finally {
      await relay.close();
    }
  });
});

describe('svc relay events', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  let prefix: string;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home };
    const a = await pairPhone(relay, { terms: { ttl_seconds: 86400, grants: { terminal: '1h', bridge: false } } });
    const b = await pairPhone(relay);
    prefix = a.prefix;
    token = b.token;
    const del = await fetch(`${relay.url}/sessions/${b.prefix}`, { method: 'DELETE', headers: bearer(a.token) });
    expect(del.status).toBe(200);
    a.phone.close();
    b.phone.close();
    // Each close is recorded once the relay sees it: wait for both, so the log stands still for the tests.
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
  });
  afterAll(() => relay?.close());

  it('replay rebuilds the same state the relay holds and summarises it (text and --json)', async () => {
    const at = relay.clock.now().toISOString();
    const r = await svc(['relay', 'events', 'replay', '--json', '--at', at], env);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    const models = new ReadModels();
    const summary = replayLog(path.join(relay.home, 'relay', 'events'), models);
    expect(report.lastSeq).toBe(relay.loop.lastSeq);
    expect(report.lastHash).toBe(relay.loop.lastHash);
    expect(report.countsByType).toEqual(summary.countsByType);
    expect(report.countsByType['session.revoked']).toBe(1);
    expect(report.sessions.map((s: { token_prefix: string }) => s.token_prefix)).toEqual([prefix]);
    expect(report.sessions[0].grants.terminal).toBe(new Date(relay.clock.now().getTime() + 3600_000).toISOString());
    expect(report.sessions[0].grants).not.toHaveProperty('bridge');
    expect(JSON.stringify(report)).not.toContain(token);

    const text = await svc(['relay', 'events', 'replay', '--at', at], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`last seq ${relay.loop.lastSeq}, chain ok`);
    expect(text.stdout).toContain(`sessions active at ${at}: 1`);
    expect(text.stdout).toMatch(new RegExp(`${prefix}\\s+Test phone`));
    expect(text.stdout).toMatch(/session\.created\s+2/);
  });

  it('verify passes an intact log, and names the first bad record of an edited copy (exit 1)', async () => {
    const ok = await svc(['relay', 'events', 'verify'], env);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`${relay.loop.lastSeq} records in 1 segment, chain intact`);

    const copy = tempHome();
    const src = path.join(relay.home, 'relay', 'events');
    for (const f of fs.readdirSync(src)) fs.copyFileSync(path.join(src, f), path.join(copy, f));
    const file = path.join(copy, listSegments(copy)[0].file);
    const text = fs.readFileSync(file, 'utf8').split('\n');
    text[3] = text[3].replace('"actor":"', '"actor":"X'); // seq 4 edited, its checksum no longer matches
    fs.writeFileSync(file, text.join('\n'));
    const bad = await svc(['relay', 'events', 'verify', '--log', copy], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('first bad record: seq 4 in segment-000000000001.jsonl: checksum mismatch');
    const json = await svc(['relay', 'events', 'verify', '--log', copy, '--json'], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, seq: 4, reason: 'checksum mismatch' });
    const replay = await svc(['relay', 'events', 'replay', '--log', copy], env);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain('event log broken at seq 4');
  });

  it('verify and replay show their progress on a terminal (and only there), then erase it', async () => {
    // A 3 MiB log: several read chunks, so the scan reports progress more than once.
    const dir = tempHome();
    let prev = GENESIS_HASH;
    const out: string[] = [];
    for (let seq = 1; seq <= 7000; seq++) {
      const { line, hash } = encodeRecord({
        seq,
        id: `id-${seq}`,
        at: '2026-03-01T12:00:00.000Z',
        type: 'session.seen',
        actor: `device:p${seq}`,
        data: { tokenPrefix: `p${String(seq).padStart(7, '0')}`, ip: `10.0.${seq >> 8}.${seq & 255}`, via: 'http', pad: 'x'.repeat(300) },
        v: 1,
        prev,
      });
      out.push(line);
      prev = hash;
    }
    fs.writeFileSync(path.join(dir, 'segment-000000000001.jsonl'), out.join('\n') + '\n');
    for (const cmd of ['verify', 'replay']) {
      let stderr = '';
      const io = (tty: boolean) => ({
        stdout: { write: () => true, isTTY: false },
        stderr: { write: (t: string) => (stderr += t), isTTY: tty },
        env: { PATH: process.env.PATH },
      });
      expect(await main(['relay', 'events', cmd, '--log', dir], io(true))).toBe(0);
      const label = cmd === 'verify' ? 'verifying' : 'replaying';
      expect(stderr).toMatch(new RegExp(`\\r${label} \\d+%  seq [\\d,]+`));
      expect(stderr.endsWith('\r\x1b[K')).toBe(true);
      stderr = '';
      expect(await main(['relay', 'events', cmd, '--log', dir], io(false))).toBe(0);
      expect(stderr).toBe('');
    }
  });

  it('accepts --log as the events dir, the relay dir or the svc home; says so when there is no log', async () => {
    for (const dir of [path.join(relay.home, 'relay', 'events'), path.join(relay.home, 'relay'), relay.home]) {
      const r = await svc(['relay', 'events', 'verify', '--log', dir], { SVC_HOME: '/nonexistent' });
      expect(r.code).toBe(0);
    }
    const none = await svc(['relay', 'events', 'verify'], { SVC_HOME: tempHome() });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no event log at');
    const file = await svc(['relay', 'events', 'tail', '--log', path.join(relay.home, 'relay', 'secret.key')], env);
    expect(file.code).toBe(1);
    expect(file.stderr).toContain('give the event log directory, a .jsonl export, or a postgres:// URL');
  });

  it('tail prints the newest N, filters by type prefix, and --json prints the stored records', async () => {
    const all = lines((await svc(['relay', 'events', 'tail', '--limit', '0', '--json'], env)).stdout).map((l) => JSON.parse(l));
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: relay.loop.lastSeq }, (_, i) => i + 1));

    const last3 = lines((await svc(['relay', 'events', 'tail', '-n', '3'], env)).stdout);
    expect(last3).toHaveLength(3);
    expect(last3[2]).toMatch(new RegExp(`^#${relay.loop.lastSeq} `));

    for (const type of ['session', 'session.']) {
      const only = lines((await svc(['relay', 'events', 'tail', '--type', type, '--limit', '0', '--json'], env)).stdout).map((l) => JSON.parse(l));
      expect(only.length).toBe(all.filter((e) => e.type.startsWith('session.')).length);
      expect(only.every((e) => e.type.startsWith('session.'))).toBe(true);
    }
    const two = lines((await svc(['relay', 'events', 'tail', '--type', 'session.revoked,relay.started', '--limit', '0', '--json'], env)).stdout);
    expect(two.map((l) => JSON.parse(l).type).sort()).toEqual(['relay.started', 'session.revoked']);
    const text = (await svc(['relay', 'events', 'tail', '--type', 'session.created'], env)).stdout;
    expect(text).toMatch(/"tokenDigest":"[A-Za-z0-9_-]{8}…"/); // digests shortened for reading
  });

  it('tail --follow prints events as the relay writes them, until stopped', async () => {
    const stop = new AbortController();
    let out = '';
    const done = main(['relay', 'events', 'tail', '--follow', '--type', 'pairing', '--limit', '1'], {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: () => true },
      env,
      signal: stop.signal,
    });
    await untilTrue(() => lines(out).length === 1);
    const res = await registerCode(relay, 'FOLLOW');
    expect(res.status).toBe(200);
    await untilTrue(() => lines(out).length === 2);
    expect(lines(out)[1]).toContain('pairing.code_registered');
    expect(out).not.toContain('FOLLOW');
    stop.abort('SIGINT');
    await expect(done).resolves.toBe(0);
  });
});

describe('pretty log lines', () => {
  it('turns pino JSON into one readable line and passes anything else through', () => {
    const raw = JSON.stringify({
      level: 40,
      time: '2026-03-01T12:00:01.234Z',
      svc: 'relay',
      segment: 'segment-000000000001.jsonl',
      droppedBytes: 17,
      msg: 'event log: cut a torn last line',
    });
    expect(formatLine(raw)).toBe('12:00:01.234 WARN  event log: cut a torn last line segment=segment-000000000001.jsonl droppedBytes=17');
    expect(formatLine(JSON.stringify({ level: 30, time: '2026-03-01T12:00:01.234Z', msg: 'x', note: 'two words' }))).toBe(
      '12:00:01.234 INFO  x note="two words"',
    );
    expect(formatLine('not json')).toBe('not json');
  });
});
