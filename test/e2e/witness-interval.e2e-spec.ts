import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';
import { backoffSeconds } from '../../apps/relay/src/cli/witness';
import { ensureBuilt, spawnSvc, waitForOutput, type SvcProcess } from '../support/dist';

/**
 * `svc relay witness --interval` as a real process (issue 39 follow-up): rounds until SIGTERM/SIGINT,
 * each ending cleanly; a refusal said every round and the exit status 1 when it stops; a doubling,
 * bounded wait while the relay is unreachable. Outcomes are asserted (lines, exit codes, files), never
 * durations: each wait is for a line the process prints.
 */
jest.setTimeout(90_000);

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function settle(relay: TestRelay): Promise<void> {
  while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
  await relay.loop.drain();
}

const stdoutHas = async (p: SvcProcess, re: RegExp) => {
  for (const deadline = Date.now() + 30_000; !re.test(p.stdout()); await new Promise((r) => setTimeout(r, 25)))
    if (Date.now() > deadline) throw new Error(`not seen ${re}\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`);
};

describe('svc relay witness --interval', () => {
  let relay: TestRelay;
  let logVkey: string;
  let wvkey: string;
  const witnessHome = tempHome();
  const running: SvcProcess[] = [];
  const spawnWitness = (home: string, url: string, extra: string[] = []) => {
    const p = spawnSvc(['relay', 'witness', '--home', home, '--relay', url, '--log-vkey', logVkey, ...extra], { NO_COLOR: '1' });
    running.push(p);
    return p;
  };

  beforeAll(async () => {
    ensureBuilt();
    wvkey = (await svc(['relay', 'witness', '--home', witnessHome, '--name', 'witness.test/loop', '--print-vkey'])).stdout.trim();
    // Published at once when grown, so each round sees the newest tree without moving the relay's clock.
    relay = await startRelay({ env: { RELAY_WITNESS_VKEYS: wvkey, RELAY_CHECKPOINT_PUBLISH_SECONDS: '0' } });
    await pairPhone(relay).then((p) => p.phone.close());
    await settle(relay);
    logVkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: relay.home })).stdout.trim();
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await relay?.close();
  });

  it('runs rounds until SIGTERM, cosigning each newer tree, and stops cleanly with exit 0', async () => {
    const p = spawnWitness(witnessHome, relay.url, ['--interval', '1']);
    const first = relay.loop.lastSeq;
    await stdoutHas(p, new RegExp(`cosigned  \\S+ tree size ${first} \\(first checkpoint seen\\)`));
    await pairPhone(relay).then((x) => x.phone.close());
    await settle(relay);
    const grown = relay.loop.lastSeq;
    await stdoutHas(p, new RegExp(`tree size ${grown} \\(consistent with ${first} cosigned before\\)`));
    p.child.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 0, signal: null });
    expect(p.stderr()).toContain('witness: stopped (exit 0)');
    expect(p.stderr()).not.toContain('WITNESS REFUSED');
    const w = (await (await fetch(`${relay.url}/log/witnesses`, { headers: relay.op })).json()) as {
      witnesses: Array<{ cosigned: { size: number } }>;
    };
    expect(w.witnesses[0].cosigned.size).toBe(grown);
  });

  it('says a refusal every round, counts it in witness.prom, and exits 1 when stopped (SIGINT)', async () => {
    // This witness cosigned a larger tree of this log before: the relay's looks rewound.
    const state = JSON.parse(fs.readFileSync(path.join(witnessHome, 'state.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(witnessHome, 'state.json'), JSON.stringify({ ...state, size: 1_000_000 }));
    const p = spawnWitness(witnessHome, relay.url, ['--interval', '1']);
    await waitForOutput(p, (s) => (s.split('WITNESS REFUSED').length > 2 ? true : null), 30_000);
    p.child.kill('SIGINT');
    expect(await p.exited).toEqual({ code: 1, signal: null });
    expect(p.stderr()).toMatch(/WITNESS REFUSED .*rewound/);
    expect(p.stderr()).toContain('witness: stopped (a refusal was reported; exit 1)');
    const refusals = Number(/svc_witness_refusals_total (\d+)/.exec(fs.readFileSync(path.join(witnessHome, 'witness.prom'), 'utf8'))![1]);
    expect(refusals).toBeGreaterThanOrEqual(2);
    const w = (await (await fetch(`${relay.url}/log/witnesses`, { headers: relay.op })).json()) as {
      witnesses: Array<{ refusal: { reason: string } | null }>;
    };
    expect(w.witnesses[0].refusal?.reason).toContain('rewound');
  });

  it('backs off while the relay is unreachable (the wait doubles, bounded), and exits 1 if still unreachable when stopped', async () => {
    const home = tempHome();
    await svc(['relay', 'witness', '--home', home, '--name', 'witness.test/away', '--print-vkey']);
    const p = spawnWitness(home, `http://127.0.0.1:${await deadPort()}`, ['--interval', '1']);
    await waitForOutput(p, (s) => /unreachable \(3 in a row\)/.test(s) || null, 30_000);
    p.child.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 1, signal: null });
    const waits = [...p.stderr().matchAll(/\((\d+) in a row\); next round in (\d+) s/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(waits.slice(0, 3)).toEqual([
      [1, 1],
      [2, 2],
      [3, 4],
    ]);
    expect(p.stderr()).toContain('the relay was unreachable at the last round; exit 1');
    // Bounded: never past the larger of the interval and 15 minutes.
    expect([backoffSeconds(1, 40), backoffSeconds(60, 40), backoffSeconds(3600, 3)]).toEqual([900, 900, 3600]);
  });

  it('refuses a bad --interval as a usage error', async () => {
    for (const bad of ['0', '-1', '1.5', 'x', '86401']) {
      const r = await svc(['relay', 'witness', '--home', witnessHome, '--relay', relay.url, '--interval', bad]);
      expect([bad, r.code]).toEqual([bad, 2]);
      expect(r.stderr).toContain('--interval');
    }
  });
});
