import { COMMAND_PATHS } from '../../apps/relay/src/cli/main';
import { HELP } from '../../apps/relay/src/cli/usage';
import { Phone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';

describe('svc help lists every command', () => {
  const relayCommands = COMMAND_PATHS.filter((p) => p.startsWith('relay ')).map((p) => p.split(' ')[1]);

  it('knows the commands it routes (not a list kept by hand)', () => {
    expect(relayCommands).toEqual(expect.arrayContaining(['start', 'pair', 'devices', 'blocks', 'events', 'profiles', 'compat', 'doctor']));
  });

  it.each([...new Set(relayCommands)])('"svc relay --help" lists relay %s', async (word) => {
    const r = await svc(['relay', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^  ${word}\\b`, 'm'));
  });

  it.each(COMMAND_PATHS.filter((p) => !p.startsWith('relay events ')))('"svc --help" lists svc %s', async (p) => {
    expect((await svc(['--help'])).stdout).toMatch(new RegExp(`^  svc ${p}\\b`, 'm'));
  });

  it.each(COMMAND_PATHS)('"svc %s --help" prints its own help', async (p) => {
    const r = await svc([...p.split(' '), '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${HELP[p] ?? HELP['']}\n`);
  });
});

describe('a usage error says why on its last line', () => {
  it.each([
    [[], 'svc: a command is required'],
    [['relay'], 'svc: "svc relay" needs a command'],
    [['relay', 'bogus'], 'svc: unknown command "relay bogus"'],
    [['relay', 'start', '--bogus'], "svc: Unknown option '--bogus'"],
    [['relay', 'blocks', 'frobnicate'], 'svc: unknown action "frobnicate" (list, unblock ADDRESS)'],
    [['relay', 'blocks', 'unblock'], 'svc: unblock needs the address as listed'],
  ])('svc %j', async (args, reason) => {
    const r = await svc(args as string[], { SVC_HOME: tempHome() });
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toContain(reason);
    expect(lines[0]).toMatch(/^(Usage:|svc: operator commands)/);
    expect(r.stderr.indexOf('Usage:')).toBeLessThan(r.stderr.indexOf(reason));
  });
});

describe('svc relay blocks', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home, RELAY_HOST: '127.0.0.1', RELAY_PORT: String(relay.port) };
  });
  afterAll(() => relay?.close());

  it('lists the blocks in force and lifts one as the operator', async () => {
    expect(await svc(['relay', 'blocks'], env)).toMatchObject({ code: 0, stdout: 'no address is blocked\n' });
    for (let i = 0; i < 10; i++) {
      const p = await Phone.connect(relay.url, { localAddress: '127.0.0.13' });
      await p.auth({ pairing_code: 'BAD000' });
      await p.closed;
    }
    await relay.loop.drain();
    const list = await svc(['relay', 'blocks'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/ADDRESS\s+AFTER\s+SINCE\s+UNTIL/);
    expect(list.stdout).toMatch(/127\.0\.0\.13\s+bad pairing codes\s+2026-03-01 12:00:00 UTC\s+2026-03-01 12:02:00 UTC/);
    expect(list.stdout).toContain('1 address blocked');
    const json = JSON.parse((await svc(['relay', 'blocks', '--json'], env)).stdout) as { blocks: unknown[] };
    expect(json.blocks).toEqual([{ address: '127.0.0.13', kind: 'code', since: expect.any(Number), until: expect.any(Number) }]);

    const lifted = await svc(['relay', 'blocks', 'unblock', '127.0.0.13'], env);
    expect(lifted).toMatchObject({ code: 0, stdout: 'unblocked 127.0.0.13: it may try again at once\n' });
    expect(readEvents(relay.home).at(-1)).toMatchObject({ type: 'ratelimit.cleared', actor: 'operator', data: { ip: '127.0.0.13' } });
    const again = await svc(['relay', 'blocks', 'unblock', '127.0.0.13'], env);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining('(ratelimit.not_blocked)') });
    const bad = await svc(['relay', 'blocks', 'unblock', 'x\ny'], env);
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('(ratelimit.bad_address)') });
  });

  it('says how to start a relay when none answers', async () => {
    const r = await svc(['relay', 'blocks'], { SVC_HOME: tempHome(), RELAY_HOST: '127.0.0.1', RELAY_PORT: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no relay answers at http://127.0.0.1:1');
  });
});
