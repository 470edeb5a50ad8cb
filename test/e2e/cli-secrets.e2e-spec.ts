import { PassThrough, Readable } from 'node:stream';
import { readEvents, startRelay, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';

/*
 * `svc relay secrets list | set NAME | forget NAME` against a running relay (issue 40, item 3): the value
 * from stdin (a pipe, or a prompt that echoes nothing on a terminal), never from the command line, and
 * never printed back.
 */
describe('svc relay secrets', () => {
  let relay: TestRelay;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    relay = await startRelay();
    env = { SVC_HOME: relay.home };
  });
  afterAll(() => relay.close());

  it('set reads the value from a pipe; list shows names and times; forget shreds it; nothing prints the value', async () => {
    const set = await svc(['relay', 'secrets', 'set', 'mail'], env, { stdin: Readable.from(['Tr0ub4dor&3', '\n', 'ignored line']) });
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toMatch(/^registered the secret "mail" \(sealed in event #\d+\); agents type it with android_type_secret\n$/);
    expect(relay.loop.models.secrets.get('mail')?.value).toBe('Tr0ub4dor&3');
    const again = await svc(['relay', 'secrets', 'set', 'mail', '--json'], env, { stdin: Readable.from(['new-value']) });
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, name: 'mail', replaced: true });
    expect(relay.loop.models.secrets.get('mail')?.value).toBe('new-value');
    const list = await svc(['relay', 'secrets'], env);
    expect(list.stdout).toMatch(/^mail {2}set 2026-03-01T12:00:00Z {2}last used never\n$/);
    const json = JSON.parse((await svc(['relay', 'secrets', 'list', '--json'], env)).stdout);
    expect(json).toMatchObject({ ok: true, max: 32, secrets: [{ name: 'mail', last_used: null }] });
    const forgot = await svc(['relay', 'secrets', 'forget', 'mail'], env);
    expect(forgot.code).toBe(0);
    expect(forgot.stdout).toMatch(/^forgot the secret "mail": its value's key destroyed \(event #\d+\)/);
    expect((await svc(['relay', 'secrets'], env)).stdout).toBe('no secrets (set one: svc relay secrets set NAME; at most 32)\n');
    // The records stay (sealed, unreadable now): the chain still verifies end to end, and tail shows them without a value.
    expect((await svc(['relay', 'events', 'verify'], env)).code).toBe(0);
    const tail = await svc(['relay', 'events', 'tail', '--type', 'secret', '--json'], env);
    expect(tail.code).toBe(0);
    expect(tail.stdout.trim().split('\n')).toHaveLength(2);
    expect(tail.stdout).not.toMatch(/Tr0ub4dor|new-value/);
    const unknown = await svc(['relay', 'secrets', 'forget', 'mail'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no secret is named "mail"');
    for (const r of [set, again, list, forgot, unknown]) expect(r.stdout + r.stderr).not.toMatch(/Tr0ub4dor|new-value/);
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'secret.set')
        .map((e) => e.actor),
    ).toEqual(['operator', 'operator']);
  });

  it('on a terminal it prompts on stderr and echoes nothing; backspace edits, Ctrl-C cancels', async () => {
    const tty = Object.assign(new PassThrough(), {
      isTTY: true,
      raw: [] as boolean[],
      setRawMode(on: boolean) {
        tty.raw.push(on);
      },
    });
    tty.end('pinX\u007f-42\r');
    const r = await svc(['relay', 'secrets', 'set', 'pin'], env, { stdin: tty });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('value of "pin" (not shown): \n');
    expect(tty.raw).toEqual([true, false]);
    expect(relay.loop.models.secrets.get('pin')?.value).toBe('pin-42');
    const cancel = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined });
    cancel.end('abc\u0003');
    const c = await svc(['relay', 'secrets', 'set', 'other'], env, { stdin: cancel });
    expect(c.code).toBe(2);
    expect(relay.loop.models.secrets.get('other')).toBeUndefined();
  });

  it('refuses a value on the command line, a bad name, an empty or oversized value, before anything is sent', async () => {
    const argv = await svc(['relay', 'secrets', 'set', 'x', 'hunter2'], env);
    expect(argv.code).toBe(2);
    expect(argv.stderr).toContain('a value is read from stdin, never from the command line');
    expect(argv.stderr).not.toContain('hunter2');
    const name = await svc(['relay', 'secrets', 'set', 'bad/name'], env, { stdin: Readable.from(['v']) });
    expect(name.code).toBe(2);
    expect(name.stderr).toContain("a secret's name is 1 to 40 letters, digits, _ or -");
    expect((await svc(['relay', 'secrets', 'set', 'e'], env, { stdin: Readable.from(['\n']) })).code).toBe(2);
    const big = await svc(['relay', 'secrets', 'set', 'big'], env, { stdin: Readable.from(['B'.repeat(5000)]) });
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('at most 1024 characters');
    expect(big.stderr).not.toContain('BBBB');
    expect((await svc(['relay', 'secrets', 'rotate', 'x'], env)).code).toBe(2);
    expect(['e', 'big', 'x', 'bad/name'].map((n) => relay.loop.models.secrets.get(n))).toEqual([undefined, undefined, undefined, undefined]);
  });
});
