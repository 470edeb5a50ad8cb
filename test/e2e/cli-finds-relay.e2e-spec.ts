import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';

/**
 * Issue 34, finding 9 (and the CLI's half of finding 1): the CLI talks to the relay of the home it is
 * pointed at, on whatever port it listens (the home's lock says where), with that home's operator key;
 * every failure is one plain sentence with what to do. Before, `svc relay events forget` with the relay
 * on another port printed `unexpected error: LogLockedError` and a stack trace.
 */
describe('the CLI finds the relay of its home', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
  });
  afterAll(() => relay?.close());

  // Only SVC_HOME: no RELAY_PORT, so the environment alone would dial 8767, where this relay is not.
  const home = () => ({ SVC_HOME: relay.home });

  it('devices, blocks and pair reach it on its ephemeral port', async () => {
    const { prefix, phone } = await pairPhone(relay, { device: { device_name: 'Found phone' } });
    const devices = await svc(['relay', 'devices', '--json'], home());
    expect(devices.code).toBe(0);
    expect(JSON.parse(devices.stdout).devices.map((s: { token_prefix: string }) => s.token_prefix)).toContain(prefix);
    expect((await svc(['relay', 'blocks', '--json'], home())).code).toBe(0);
    expect((await svc(['relay', 'pair', '--json'], home())).code).toBe(0);
    phone.close();
  });

  it('events forget goes through the running relay: no LogLockedError, no stack trace', async () => {
    const { prefix, phone } = await pairPhone(relay);
    phone.send('notifications', 'notification.posted', { package_name: 'com.chat', title: 'Hi', text: 'secret words', posted_at: 1 });
    await relay.loop.drain();
    const dry = await svc(['relay', 'events', 'forget', `--device=${prefix}`, '--json'], home());
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ ok: true, dry_run: true, via: 'relay' });
    const done = await svc(['relay', 'events', 'forget', `--device=${prefix}`, '--yes', '--json'], home());
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ ok: true, dry_run: false, via: 'relay' });
    phone.close();
  });

  it('svc relay console prints a one-time sign-in link that works once', async () => {
    const r = await svc(['relay', 'console', '--json'], home());
    expect(r.code).toBe(0);
    const { url, expires_at } = JSON.parse(r.stdout) as { url: string; expires_at: number };
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${relay.port}/console/login#[A-Za-z0-9_-]{43}$`));
    expect(expires_at).toBe(Math.floor(relay.clock.now().getTime() / 1000) + 15 * 60);
    const ticket = url.split('#')[1];
    const open = (t: string) =>
      fetch(`${relay.url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ticket: t }),
      });
    const first = await open(ticket);
    expect(first.status).toBe(200);
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toMatch(new RegExp(`^svc_console_${relay.port}=[A-Za-z0-9_-]{43}; Path=/console; Max-Age=43200; HttpOnly; SameSite=Strict$`));
    const signedIn = await fetch(`${relay.url}/console/api/overview`, { headers: { cookie: cookie.split(';')[0] } });
    expect(signedIn.status).toBe(200);
    const again = await open(ticket);
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ code: 'console.link_invalid' });
    // The text form: the link alone on stdout (for a script), what to do on stderr.
    const plain = await svc(['relay', 'console'], home());
    expect(plain.stdout.trim()).toMatch(/\/console\/login#/);
    expect(plain.stderr).toContain('within 15 minutes');
  });

  it('a link unused for 15 minutes, and a cookie after RELAY_CONSOLE_SESSION_HOURS, no longer work (the relay clock decides)', async () => {
    const link = await relay.consoleLink();
    relay.clock.advanceSeconds(15 * 60 + 1);
    const late = await fetch(`${relay.url}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ticket: link.url.split('#')[1] }),
    });
    expect(late.status).toBe(401);
    const fresh = await relay.consoleLink();
    const ok = await fetch(`${relay.url}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ticket: fresh.url.split('#')[1] }),
    });
    const cookie = ok.headers.get('set-cookie')!.split(';')[0];
    expect((await fetch(`${relay.url}/console/api/overview`, { headers: { cookie } })).status).toBe(200);
    relay.clock.advanceSeconds(12 * 3600 + 1);
    expect((await fetch(`${relay.url}/console/api/overview`, { headers: { cookie } })).status).toBe(401);
  });
});

describe('when the CLI cannot act, it says so in one sentence', () => {
  it('no relay runs with the home, and none answers where the environment points', async () => {
    const r = await svc(['relay', 'devices'], { SVC_HOME: tempHome(), RELAY_PORT: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('no relay answers at http://127.0.0.1:1');
    expect(r.stderr).toContain('svc relay start');
    expect(r.stderr).not.toContain('    at ');
  });

  it("a relay found through the environment refuses another home's key (or none) and the CLI says which home", async () => {
    const relay = await startRelay();
    try {
      const stranger = tempHome();
      const r = await svc(['relay', 'devices'], { SVC_HOME: stranger, RELAY_PORT: String(relay.port) });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('needs the operator key');
      expect(r.stderr).toContain(`${stranger}/relay/operator.key`);
      expect(r.stderr).not.toContain('    at ');
    } finally {
      await relay.close();
    }
  });

  it("a forget with no relay running works on the home's files", async () => {
    const relay = await startRelay();
    const { home } = relay;
    await relay.close();
    const offline = await svc(['relay', 'events', 'forget', '--device', 'ABCD', '--json'], { SVC_HOME: home });
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout)).toMatchObject({ via: 'files' });
  });
});

describe("svc relay start's banner", () => {
  /** Runs `svc relay start` in this process until `until` is on stderr, then stops it. */
  async function banner(errTty: boolean): Promise<string> {
    const stop = new AbortController();
    let seen = '';
    const done = svc(
      ['relay', 'start'],
      { SVC_HOME: tempHome(), RELAY_HOST: '127.0.0.1', RELAY_PORT: '0' },
      {
        signal: stop.signal,
        errTty,
        onStderr: (all) => {
          seen = all;
          if (/^console sign-in/m.test(all) && !stop.signal.aborted) stop.abort('test');
        },
      },
    );
    const r = await done;
    expect(r.code).toBe(0);
    return seen;
  }

  it('on a terminal: a one-time sign-in link for the console', async () => {
    const text = await banner(true);
    expect(text).toMatch(/^console sign-in http:\/\/127\.0\.0\.1:\d+\/console\/login#[A-Za-z0-9_-]{43} /m);
  });

  it('not on a terminal (a service manager, whose stderr is a log): no credential, how to get one', async () => {
    const text = await banner(false);
    expect(text).toContain('console sign-in: run "svc relay console" on this machine for a one-time link');
    expect(text).not.toContain('/console/login#');
  });
});
