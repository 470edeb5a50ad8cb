import { dc, until } from '../support/bridge';
import { ensureBuilt } from '../support/dist';
import { startRelay, type TestRelay } from '../support/harness';
import { spawnSim, startPairedSim, type SimProcess } from '../support/phone-sim-process';

/*
 * `svc phone-sim --ui apps` (issue 40, item 2): the simulator's app screens from the command line, as an operator
 * or a benchmark runs it, read and driven over the Device Control routes (apps/phone-sim/src/sim-screens.ts).
 */

jest.setTimeout(60_000);

describe('svc phone-sim --ui', () => {
  let relay: TestRelay;
  const sims: SimProcess[] = [];
  beforeAll(async () => {
    ensureBuilt();
    relay = await startRelay();
  });
  afterAll(async () => {
    for (const s of sims) s.child.kill('SIGKILL');
    await relay.close();
  });

  const texts = (body: Record<string, any>) => (body.nodes as Array<{ text: string | null }>).map((n) => n.text).filter(Boolean);

  it('apps: the settings screen, whose Wi-Fi switch a tap by text turns off', async () => {
    const { sim, token } = await startPairedSim(relay, sims, ['--ui', 'apps', '--current-app', 'com.android.settings', '--stay']);
    const saved = () => {
      try {
        return token().length > 0;
      } catch {
        return false;
      }
    };
    await until(saved, 20_000);
    await until(() => relay.loop.models.bridge.device(token().slice(0, 8))?.connId !== undefined, 10_000);
    expect(sim.output()).not.toContain('must be');
    const before = await dc(relay, token(), 'GET', '/screen');
    expect(texts(before.body)).toEqual(expect.arrayContaining(['Settings', 'Wi-Fi', 'Connected to HomeNet', 'Airplane mode']));
    expect((await dc(relay, token(), 'POST', '/tap_text', { text: 'Wi-Fi' })).status).toBe(200);
    expect(texts((await dc(relay, token(), 'GET', '/screen')).body)).toEqual(expect.arrayContaining(['Wi-Fi', 'Off']));
  });

  it('refuses another value with the usage, exit 2', async () => {
    const sim = spawnSim(['--code', 'ABC123', '--ui', 'web']);
    sims.push(sim);
    expect(await sim.exited).toEqual({ code: 2, signal: null });
    expect(sim.output()).toContain('--ui must be fixed or apps');
  });
});
