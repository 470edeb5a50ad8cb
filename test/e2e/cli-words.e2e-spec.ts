import { COMMAND_PATHS } from '../../apps/relay/src/cli/main';
import { svc } from '../support/cli';
import { startRelay, type TestRelay } from '../support/harness';

/** Issue 36.7: what the help says is what the CLI does. */
describe('the CLI says what it does', () => {
  it('"svc relay --help" names every events command (forget too), read from the commands it routes', async () => {
    const help = (await svc(['relay', '--help'])).stdout;
    const events = COMMAND_PATHS.filter((p) => p.startsWith('relay events ')).map((p) => p.split(' ')[2]);
    expect(events).toContain('forget');
    const listed = /^ {2}events (\S+)$/m.exec(help)?.[1].split('|');
    expect(listed?.toSorted()).toEqual(events.toSorted());
    expect((await svc(['relay', 'events', '--help'])).stdout).toContain(`<${listed!.join('|')}>`);
  });

  it('"pair --help" names the pairing URL in the spelling in force, not always hermes-relay://', async () => {
    const help = (await svc(['relay', 'pair', '--help'])).stdout;
    expect(help).not.toContain('the hermes-relay:// URL to paste');
    expect(help).toContain(
      'the pairing URL to paste (svc-relay://, or\nhermes-relay:// when the relay runs with RELAY_CLIENT_SPELLING=hermes: the spelling in force)',
    );
  });

  describe('a token prefix that starts with "-"', () => {
    let relay: TestRelay;
    beforeAll(async () => {
      relay = await startRelay();
    });
    afterAll(async () => {
      await relay.close();
    });

    it('devices revoke -Xy1 says to put "--" before it (exit 2); with "--" it reaches the relay', async () => {
      const env = { SVC_HOME: relay.home };
      const bare = await svc(['relay', 'devices', 'revoke', '-Xy1'], env);
      expect(bare.code).toBe(2);
      expect(bare.stderr.trimEnd().split('\n').at(-1)).toBe(
        'svc: -Xy1 reads as an option: a prefix that starts with "-" goes after "--" (svc relay devices revoke -- -Xy1)',
      );
      const dashed = await svc(['relay', 'devices', 'revoke', '--', '-Xy1'], env);
      expect(dashed.code).toBe(1); // asked, and the relay has no such session
      expect(dashed.stderr).toMatch(/^svc relay devices: .*sessions\.not_found/m);
      expect((await svc(['relay', 'devices', 'end-trust', '-Xy1'], env)).stderr).toContain('(svc relay devices end-trust -- -Xy1)');
    });

    it('the usage texts say so: devices (--) and events forget (--device=)', async () => {
      expect((await svc(['relay', 'devices', '--help'])).stdout).toContain('put "--" before it: svc relay devices revoke -- -Xy1');
      expect((await svc(['relay', 'events', 'forget', '--help'])).stdout).toMatch(/starts with "-" reads as an option: write --device=-Xy1/);
    });
  });
});
