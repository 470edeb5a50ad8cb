import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { bearer, Phone, readEvents, tempHome } from '../support/harness';
import { ensureBuilt, ROOT, spawnSvc, startRelayProcess } from '../support/dist';
import { WebSocket } from 'ws';
import { operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

beforeAll(() => ensureBuilt(), 120_000);

describe('bin/svc relay start (a real process)', () => {
  it('prints the listening URL, serves, and on SIGTERM stops cleanly with relay.stopping written (exit 0)', async () => {
    const home = tempHome();
    const relay = await startRelayProcess(home, { RELAY_PAIRING_CODE: 'ENV123' });
    expect(relay.stderr()).toContain(`event log ${path.join(home, 'relay', 'events')}`);
    expect(relay.stderr()).not.toContain('Pair a phone'); // not a terminal
    const health = await (await fetch(`${relay.url}/health`)).json();
    expect(health).toMatchObject({ status: 'ok', sessions: 0 });

    // RELAY_PAIRING_CODE works, and neither the code nor the token reaches the log output.
    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth({ pairing_code: 'ENV123', device_name: 'p', device_id: 'd1' });
    expect(ok.type).toBe('auth.ok');
    const token = ok.payload.session_token as string;
    expect((await fetch(`${relay.url}/sessions`, { headers: bearer(token) })).status).toBe(200);

    relay.child.kill('SIGTERM');
    expect(await relay.exited).toEqual({ code: 0, signal: null });
    expect(await phone.closed).toBe(1001);
    expect(relay.stderr()).toContain('stopping (SIGTERM)');
    const events = readEvents(home);
    expect(events.at(-1)).toMatchObject({ type: 'relay.stopping', data: { reason: 'SIGTERM' } });
    // The log records the close the relay sent (1001 going away), not the 1006 `ws` reports when a peer
    // leaves the closing handshake unanswered.
    expect(events.filter((e) => e.type === 'phone.disconnected').at(-1)).toMatchObject({ data: { code: 1001, reason: 'relay stopping' } });
    const out = relay.stdout() + relay.stderr();
    expect(out).not.toContain('ENV123');
    expect(out).not.toContain(token);
    // Not a terminal: the logs are JSON lines.
    for (const l of relay.stdout().split('\n').filter(Boolean)) expect(() => JSON.parse(l)).not.toThrow();
  });

  it('RELAY_LOG_FORMAT=pretty prints readable log lines', async () => {
    const relay = await startRelayProcess(tempHome(), { RELAY_LOG_FORMAT: 'pretty' });
    relay.child.kill('SIGINT');
    expect((await relay.exited).code).toBe(0);
    expect(relay.stdout()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}relay listening url=http:\/\/127\.0\.0\.1:\d+ /m);
    expect(relay.stdout()).not.toContain('{"level"');
  });

  it('refuses a port in use with a clear message (exit 1) and writes nothing', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    const home = tempHome();
    const p = spawnSvc(['relay', 'start', '--port', String(port), '--host', '127.0.0.1'], { SVC_HOME: home });
    const { code } = await p.exited;
    blocker.close();
    expect(code).toBe(1);
    expect(p.stderr()).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(fs.existsSync(path.join(home, 'relay', 'events'))).toBe(false);
  });

  it('a second relay on the same SVC_HOME (another port) is refused before it writes, and the first goes on', async () => {
    const home = tempHome();
    const first = await startRelayProcess(home);
    const before = readEvents(home).length;
    const second = spawnSvc(['relay', 'start'], { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0' });
    expect((await second.exited).code).toBe(1);
    // The home's lock refuses it first (before the log's own lock could), naming the holder.
    expect(second.stderr()).toContain(
      `svc relay start: the relay home ${path.join(home, 'relay')} is in use by another relay (pid ${first.child.pid}, since `,
    );
    expect(second.stderr()).toContain("two relays on one home would delete each other's uploads");
    expect(second.stderr()).toContain(`the lock is stale: remove ${path.join(home, 'relay', 'LOCK')}`);
    expect(second.stderr()).not.toContain('    at ');
    expect(readEvents(home)).toHaveLength(before);
    // The first relay still owns a single, unforked chain.
    const reg = await fetch(`${first.url}/pairing/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"code":"LCK234"}',
    });
    expect(reg.status).toBe(200);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    const verify = spawnSvc(['relay', 'events', 'verify'], { SVC_HOME: home });
    expect((await verify.exited).code).toBe(0);
    expect(fs.existsSync(path.join(home, 'relay', 'events', 'LOCK'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'relay', 'LOCK'))).toBe(false);
    // Stopped: the log is free again.
    const third = await startRelayProcess(home);
    third.child.kill('SIGTERM');
    expect((await third.exited).code).toBe(0);
  });

  it('a relay killed with SIGKILL leaves a lock the next start takes over', async () => {
    const home = tempHome();
    const first = await startRelayProcess(home);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(fs.existsSync(path.join(home, 'relay', 'events', 'LOCK'))).toBe(true);
    const next = await startRelayProcess(home);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'relay', 'events', 'LOCK'), 'utf8'))).toMatchObject({ pid: next.child.pid });
    // The run records (and says) that the one before it did not stop.
    expect(next.stderr()).toContain(`the previous relay (pid ${first.child.pid}) did not stop`);
    expect(
      readEvents(home)
        .filter((e) => e.type === 'relay.started')
        .at(-1)!.data,
    ).toMatchObject({
      pid: next.child.pid,
      staleLock: { pid: first.child.pid, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    next.child.kill('SIGTERM');
    expect((await next.exited).code).toBe(0);
  });

  it('bad configuration: a clear error and exit 1, no stack trace', async () => {
    const cases: Array<[NodeJS.ProcessEnv, string]> = [
      [{ RELAY_LOG_LEVEL: 'LOUD' }, 'RELAY_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR'], // the setting the operator set, named
      [{ RELAY_PORT: 'eighty' }, 'RELAY_PORT/--port must be 0-65535'],
      [{ RELAY_SSL_CERT: '/nonexistent/cert.pem', RELAY_SSL_KEY: '/nonexistent/key.pem' }, 'TLS file not found'],
      [{ RELAY_SSL_CERT: '/nonexistent/cert.pem' }, 'TLS needs both RELAY_SSL_CERT and RELAY_SSL_KEY'],
      [{ RELAY_LOG_FORMAT: 'xml' }, 'RELAY_LOG_FORMAT must be json or pretty'],
    ];
    await Promise.all(
      cases.map(async ([env, message]) => {
        const home = tempHome();
        const p = spawnSvc(['relay', 'start'], { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0', ...env });
        expect((await p.exited).code).toBe(1);
        expect(p.stderr()).toContain('svc relay start: configuration: ');
        expect(p.stderr()).toContain(message);
        expect(p.stderr()).not.toContain('    at '); // no stack trace for an operator's mistake
        expect(fs.existsSync(path.join(home, 'relay', 'events'))).toBe(false);
      }),
    );
  });

  it('refuses to start on a log broken in the middle, naming the record (exit 1)', async () => {
    const home = tempHome();
    const first = await startRelayProcess(home);
    first.child.kill('SIGTERM');
    await first.exited;
    const second = await startRelayProcess(home);
    second.child.kill('SIGTERM');
    await second.exited;
    const dir = path.join(home, 'relay', 'events');
    fs.rmSync(path.join(home, 'relay', 'snapshots'), { recursive: true, force: true });
    const file = path.join(dir, fs.readdirSync(dir)[0]);
    const text = fs.readFileSync(file, 'utf8').split('\n');
    text[1] = text[1].replace('"system"', '"sistem"'); // seq 2 edited
    fs.writeFileSync(file, text.join('\n'));

    const p = spawnSvc(['relay', 'start'], { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '0' });
    expect((await p.exited).code).toBe(1);
    expect(p.stderr()).toContain('the event log is broken at seq 2 (segment-000000000001.jsonl): checksum mismatch');
    expect(p.stderr()).toContain('svc relay events verify --log');

    const verify = spawnSvc(['relay', 'events', 'verify'], { SVC_HOME: home });
    expect((await verify.exited).code).toBe(1);
    expect(verify.stderr()).toContain('first bad record: seq 2');
  });

  it('unknown commands print usage on stderr and exit 2; a bare `svc` too', async () => {
    await Promise.all(
      [['relay', 'frobnicate'], [], ['relay', 'start', '--nope']].map(async (args) => {
        const p = spawnSvc(args, { SVC_HOME: tempHome() });
        expect((await p.exited).code).toBe(2);
        expect(p.stderr()).toContain('Usage:');
        expect(p.stdout()).toBe('');
      }),
    );
  });
});

describe('what the relay loads at start (issue 12: start-up time is module loading)', () => {
  it("loads class-validator decorator by decorator (never its index, `validator`'s 113 modules or libphonenumber), and node-pty only for a shell", () => {
    const dist = path.join(ROOT, 'dist', 'apps', 'relay', 'src');
    const out = execFileSync(
      process.execPath,
      ['-e', `require(${JSON.stringify(path.join(dist, 'relay.js'))}); process.stdout.write(JSON.stringify(Object.keys(require.cache)))`],
      { encoding: 'utf8' },
    );
    const loaded = JSON.parse(out) as string[];
    // The DTOs were loaded (so their decorators were applied) ...
    expect(loaded.some((f) => f.endsWith(path.join('pairing', 'pairing.dto.js')))).toBe(true);
    expect(loaded.some((f) => f.includes(path.join('class-validator', 'cjs', 'decorator', 'typechecker', 'IsString.js')))).toBe(true);
    // ... without the index and what only the index pulls in.
    expect(loaded.filter((f) => f.endsWith(path.join('class-validator', 'cjs', 'index.js')))).toEqual([]);
    expect(loaded.filter((f) => f.includes(`${path.sep}libphonenumber-js${path.sep}`))).toEqual([]);
    expect(loaded.filter((f) => f.includes(`${path.sep}node_modules${path.sep}validator${path.sep}`)).length).toBeLessThan(15);
    // node-pty (and its native binding) waits for the first shell.
    expect(loaded.some((f) => f.endsWith(path.join('terminal', 'shell-process.js')))).toBe(true);
    expect(loaded.filter((f) => f.includes(`${path.sep}node-pty${path.sep}`))).toEqual([]);
    // yaml waits for the first voice call that reads a config.
    expect(loaded.filter((f) => f.includes(`${path.sep}node_modules${path.sep}yaml${path.sep}`))).toEqual([]);
  });
});

describe('relay voice from the CLI: the service .env and svc relay insecure-api-key', () => {
  it('loads $SVC_HOME/.env at start under the process environment (names printed, never values), and flips the escape hatch', async () => {
    const home = tempHome();
    const key = 'env-file-api-key-0123456789abcdef';
    fs.writeFileSync(
      path.join(home, '.env'),
      `# service env\nAPI_SERVER_KEY=${key}\nRELAY_LOG_LEVEL=DEBUG\nexport SVC_TEST_FROM_FILE="quoted value"\n`,
    );
    const relay = await startRelayProcess(home, { RELAY_LOG_LEVEL: 'ERROR' });
    try {
      expect(relay.stderr()).toMatch(/environment file .*\.env: 2 variables \(API_SERVER_KEY, SVC_TEST_FROM_FILE\)/);
      expect(relay.stderr() + relay.stdout()).not.toContain(key);
      // The key from the file opens the voice routes (loopback), and only them.
      const ok = await fetch(`${relay.url}/voice/config`, { headers: bearer(key) });
      expect(ok.status).toBe(200);
      expect((await fetch(`${relay.url}/sessions`, { headers: { ...bearer(key), 'x-forwarded-for': '203.0.113.9' } })).status).toBe(401);

      const port = new URL(relay.url).port;
      const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: port };
      const status = spawnSvc(['relay', 'insecure-api-key', '--json'], env);
      expect((await status.exited).code).toBe(0);
      expect(JSON.parse(status.stdout())).toMatchObject({ allow_insecure_api_bearer: false, api_key_configured: true });
      const on = spawnSvc(['relay', 'insecure-api-key', 'on'], env);
      expect((await on.exited).code).toBe(0);
      expect(on.stdout()).toContain('ON');
      const after = spawnSvc(['relay', 'insecure-api-key', 'status', '--json'], env);
      await after.exited;
      expect(JSON.parse(after.stdout()).allow_insecure_api_bearer).toBe(true);
      const bad = spawnSvc(['relay', 'insecure-api-key', 'maybe'], env);
      expect((await bad.exited).code).toBe(2);
      expect(bad.stderr()).toContain('status, on or off');
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
    expect(readEvents(home).filter((e) => e.type === 'relay.security_changed')).toHaveLength(1);
    const none = spawnSvc(['relay', 'insecure-api-key'], { SVC_HOME: home, RELAY_PORT: '1' });
    expect((await none.exited).code).toBe(1);
    expect(none.stderr()).toContain('no relay answers');
  });
});

describe('svc relay update-check (a real relay process)', () => {
  it('reports the running version and "latest unknown" offline, and JSON with --json', async () => {
    const home = tempHome();
    const relay = await startRelayProcess(home);
    try {
      const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: new URL(relay.url).port };
      const text = spawnSvc(['relay', 'update-check'], env);
      expect((await text.exited).code).toBe(0);
      expect(text.stdout()).toContain('svc relay 0.1.0: latest unknown');
      const json = spawnSvc(['relay', 'update-check', '--json'], env);
      await json.exited;
      expect(JSON.parse(json.stdout())).toMatchObject({ current: '', running_version: '0.1.0', status: 'unknown', update_available: false });
      const bad = spawnSvc(['relay', 'update-check', '--nope'], env);
      expect((await bad.exited).code).toBe(2);
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
  });
});

describe('svc relay doctor (a real relay process)', () => {
  it('checks the relay, the API server, TLS, the log chain and lock, disk and the .env, with fix hints and no secret', async () => {
    const home = tempHome();
    const key = 'doctor-api-key-0123456789abcdef';
    fs.writeFileSync(path.join(home, '.env'), `API_SERVER_KEY=${key}\n`, { mode: 0o644 });
    fs.chmodSync(path.join(home, '.env'), 0o644);
    const relay = await startRelayProcess(home);
    try {
      const env = {
        SVC_HOME: home,
        RELAY_HOST: '127.0.0.1',
        RELAY_PORT: new URL(relay.url).port,
        RELAY_WEBAPI_URL: 'http://127.0.0.1:1',
        API_SERVER_KEY: key,
      };
      const p = spawnSvc(['relay', 'doctor', '--json'], env);
      expect((await p.exited).code).toBe(0);
      const report = JSON.parse(p.stdout()) as {
        schema_version: number;
        status: string;
        checks: Array<{ id: string; status: string; summary: string; fix?: string }>;
      };
      const by = Object.fromEntries(report.checks.map((c) => [c.id, c]));
      expect(report.schema_version).toBe(1);
      expect(by.relay).toMatchObject({ status: 'ok' });
      expect(by['native-routes']).toMatchObject({ status: 'warn' });
      expect(by['native-routes'].fix).toContain('RELAY_WEBAPI_URL');
      expect(by.tls).toMatchObject({ status: 'warn' });
      expect(by['log-chain']).toMatchObject({ status: 'ok' });
      expect(by['log-chain'].summary).toMatch(/verified: (1 record|\d+ records) in /);
      expect(by.lock.summary).toContain('held by the running relay');
      expect(by.disk.status).not.toBe('error');
      expect(by['env-file']).toMatchObject({ status: 'warn', fix: `chmod 600 ${path.join(home, '.env')}` });
      expect(p.stdout() + p.stderr()).not.toContain(key);
      const text = spawnSvc(['relay', 'doctor'], env);
      await text.exited;
      expect(text.stdout()).toMatch(/ok\s+relay\s+relay 0\.1\.0 answers/);
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
    // No relay: an error, exit 1, and how to start one.
    const none = spawnSvc(['relay', 'doctor', '--json'], { SVC_HOME: home, RELAY_PORT: '1', RELAY_WEBAPI_URL: 'http://127.0.0.1:1' });
    expect((await none.exited).code).toBe(1);
    const r = JSON.parse(none.stdout()) as { status: string; checks: Array<{ id: string; status: string; fix?: string }> };
    expect(r.status).toBe('error');
    expect(r.checks.find((c) => c.id === 'relay')).toMatchObject({ status: 'error', fix: expect.stringContaining('svc relay start') });
    expect(r.checks.find((c) => c.id === 'lock')!.status).toBe('ok');
  });
});

describe('svc relay profiles (processes)', () => {
  function tree(): string {
    const home = tempHome();
    fs.writeFileSync(path.join(home, 'config.yaml'), '# root\nmodel: {default: m}\nplugins:\n  enabled: [svc-relay]\n');
    for (const [name, text] of [
      ['alpha', 'model: {default: a}\n'],
      ['beta', '# beta keeps this comment\nplugins:\n  disabled:\n    - svc-relay\n    - other\n'],
    ]) {
      fs.mkdirSync(path.join(home, 'profiles', name), { recursive: true });
      fs.writeFileSync(path.join(home, 'profiles', name, 'config.yaml'), text);
    }
    return home;
  }

  it('with no relay running: list and enable work on the files, usage errors exit 2', async () => {
    const home = tree();
    const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: '1' };
    const list = spawnSvc(['relay', 'profiles', 'list', '--json'], env);
    expect((await list.exited).code).toBe(0);
    expect(JSON.parse(list.stdout())).toMatchObject({
      relay_running: false,
      profiles: [
        { profile: 'default', state: 'enabled' },
        { profile: 'alpha', state: 'absent' },
        { profile: 'beta', state: 'disabled' },
      ],
    });
    const text = spawnSvc(['relay', 'profiles'], env);
    await text.exited;
    expect(text.stdout()).toMatch(/✗\s+beta\s+disabled/);
    expect(text.stdout()).toContain('svc relay profiles enable --all');
    for (const args of [['enable'], ['enable', '--all', 'alpha'], ['list', '--all'], ['frobnicate'], ['enable', '../x']]) {
      const bad = spawnSvc(['relay', 'profiles', ...args], env);
      expect((await bad.exited).code).toBe(2);
    }
    const unknown = spawnSvc(['relay', 'profiles', 'enable', 'gamma'], env);
    expect((await unknown.exited).code).toBe(1);
    expect(unknown.stderr()).toContain('no profile "gamma"');
    const en = spawnSvc(['relay', 'profiles', 'enable', 'beta', '--json'], env);
    expect((await en.exited).code).toBe(0);
    expect(JSON.parse(en.stdout()).results).toEqual([
      expect.objectContaining({ profile: 'beta', was: 'disabled', changed: true, backup: path.join(home, 'profiles', 'beta', 'config.yaml.bak') }),
    ]);
    expect(fs.readFileSync(path.join(home, 'profiles', 'beta', 'config.yaml'), 'utf8')).toBe(
      '# beta keeps this comment\nplugins:\n  disabled:\n    - other\n  enabled:\n    - svc-relay\n',
    );
  });

  it('with a relay running: enable --all goes through the relay, which records it', async () => {
    const home = tree();
    const relay = await startRelayProcess(home);
    try {
      const env = { SVC_HOME: home, RELAY_HOST: '127.0.0.1', RELAY_PORT: new URL(relay.url).port };
      const dry = spawnSvc(['relay', 'profiles', 'enable', '--all', '--dry-run'], env);
      expect((await dry.exited).code).toBe(0);
      expect(dry.stdout()).toContain('would enable in alpha');
      const en = spawnSvc(['relay', 'profiles', 'enable', '--all'], env);
      expect((await en.exited).code).toBe(0);
      expect(en.stdout()).toContain('already enabled in default');
      expect(en.stdout()).toContain('The relay recorded the change');
      const list = spawnSvc(['relay', 'profiles', 'list', '--json'], env);
      await list.exited;
      expect(JSON.parse(list.stdout()).profiles.map((p: { state: string }) => p.state)).toEqual(['enabled', 'enabled', 'enabled']);
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
    expect(
      readEvents(home)
        .filter((e) => e.type === 'profile.relay_enabled')
        .map((e) => e.data.profile),
    ).toEqual(['alpha', 'beta']);
  });
});

describe('svc relay start --config and --webapi-url take effect', () => {
  it('the default profile is the --config file; profile rows point loopback API servers at --webapi-url', async () => {
    const home = tempHome();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
    const config = path.join(elsewhere, 'agent.yaml');
    fs.writeFileSync(
      config,
      'description: From the --config file\nmodel: {default: flag-model}\nplatforms: {api_server: {enabled: true, port: 9911}}\n',
    );
    fs.writeFileSync(path.join(home, 'config.yaml'), 'description: the ignored default\n');
    const relay = await startRelayProcess(home, {}, ['--config', config, '--webapi-url', 'http://203.0.113.5:8642']);
    try {
      const cfg = await (await fetch(`${relay.url}/api/profiles/default/config`)).json();
      expect(cfg).toMatchObject({ profile: 'default', path: config, config: { description: 'From the --config file' } });
      const code = 'FLAGS1';
      await fetch(`${relay.url}/pairing/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code }),
      });
      const ws = new WebSocket(relay.url.replace('http', 'ws') + '/ws');
      const ok = await new Promise<Record<string, any>>((resolve, reject) => {
        ws.on('open', () => ws.send(JSON.stringify({ channel: 'system', type: 'auth', id: 'a', payload: { pairing_code: code, device_id: 'd1' } })));
        ws.on('message', (d) => {
          const f = JSON.parse(d.toString());
          if (f.type === 'auth.ok') resolve(f.payload);
          if (f.type === 'auth.fail') reject(new Error(JSON.stringify(f)));
        });
      });
      ws.close();
      expect(ok.profiles[0]).toMatchObject({
        name: 'default',
        model: 'flag-model',
        api_server_url: 'http://203.0.113.5:9911',
        api_server_host: '127.0.0.1',
      });
    } finally {
      relay.child.kill('SIGTERM');
      await relay.exited;
    }
  });
});
