import { svc } from '../support/cli';
import { fetchFrom } from '../support/elsewhere';
import { startRelay, tempHome, type TestRelay } from '../support/harness';
import { freePort } from '../support/ports';

/** Issue 36.5: each of these used to end in silence, a stack line, or a message that named the wrong thing. */
describe('dead ends say what happened and what to do', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home };
  });
  afterAll(async () => {
    await relay.close();
  });

  it('events tail --type that names no type: exit 2, says so and offers the close names', async () => {
    for (const [spec, near] of [
      ['nosuch', null],
      ['sesion', 'session'],
      ['session.revokd', 'session.revoked'],
      ['revoked', 'session.revoked'],
      ['pair', 'pairing'],
    ] as const) {
      const r = await svc(['relay', 'events', 'tail', '--type', spec], env);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const last = r.stderr.trimEnd().split('\n').at(-1)!;
      expect(last).toContain(`svc: --type ${spec}: no event type or family of that name`);
      if (near) expect(last).toMatch(new RegExp(`did you mean [^?]*\\b${near.replace('.', '\\.')}\\b`));
      else expect(last).toMatch(/families: auth, bridge, .*voice$/);
    }
    // One bad name among good ones is still refused; good names and families still print.
    expect((await svc(['relay', 'events', 'tail', '--type', 'session,nosuch'], env)).code).toBe(2);
    for (const ok of ['session', 'session.*', 'relay.started', '*']) {
      const r = await svc(['relay', 'events', 'tail', '--type', ok], env);
      expect([ok, r.code]).toEqual([ok, 0]);
    }
  });

  it('an unknown log level names where it came from: RELAY_LOG_LEVEL or --log-level', async () => {
    const fromEnv = await svc(['relay', 'start'], { SVC_HOME: tempHome(), RELAY_PORT: '0', RELAY_LOG_LEVEL: 'LOUD' });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain('RELAY_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, got "LOUD"');
    const fromFlag = await svc(['relay', 'start', '--log-level', 'loud'], { SVC_HOME: tempHome(), RELAY_PORT: '0', RELAY_LOG_LEVEL: 'INFO' });
    expect(fromFlag.code).toBe(1);
    expect(fromFlag.stderr).toContain('--log-level must be one of DEBUG, INFO, WARNING, ERROR, got "LOUD"');
  });

  it('RELAY_HOST that does not resolve: one sentence with the addresses to use, no "unexpected error", no stack', async () => {
    // A fixed port is probed before the log opens; port 0 fails in the listen itself: both say the same.
    for (const port of [String(await freePort()), '0']) {
      const r = await svc(['relay', 'start'], { SVC_HOME: tempHome(), RELAY_HOST: 'nohost.invalid', RELAY_PORT: port });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('svc relay start: RELAY_HOST/--host nohost.invalid: no such host (the name does not resolve): listen on 0.0.0.0');
      expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
    }
  });

  it('GET / on loopback points at the console (still a 404: nothing lives there); from elsewhere, the plain 404', async () => {
    const here = await fetch(`${relay.url}/`);
    expect(here.status).toBe(404);
    const body = (await here.json()) as { error: string };
    expect(body).toMatchObject({ ok: false, code: 'not_found', console: `${relay.url}/console/` });
    expect(body.error).toContain(`${relay.url}/console/`);
    const away = await fetchFrom()(`${relay.url}/`);
    expect(away.status).toBe(404);
    expect(await away.json()).toEqual({ ok: false, error: 'no such route', code: 'not_found' });
  });
});
