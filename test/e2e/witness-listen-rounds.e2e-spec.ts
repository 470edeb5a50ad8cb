import * as fs from 'node:fs';
import * as path from 'node:path';
import { pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { svc } from '../support/cli';
import { ensureBuilt, spawnSvc, type SvcProcess } from '../support/dist';

/**
 * `svc relay witness --listen` beside `--relay --interval` in one process: the pull rounds and the
 * add-checkpoint requests share the home's kept tree (a push sees what a round cosigned); a clean stop
 * without refusals exits 0; and the command line's refusals (usage errors, exit 2).
 */
jest.setTimeout(90_000);

const until = async (what: () => boolean, show: () => string) => {
  for (const deadline = Date.now() + 30_000; !what(); await new Promise((r) => setTimeout(r, 25)))
    if (Date.now() > deadline) throw new Error(`not seen in time\n${show()}`);
};

describe('svc relay witness --listen with --relay --interval', () => {
  let relay: TestRelay;
  let logVkey: string;
  const running: SvcProcess[] = [];

  beforeAll(async () => {
    ensureBuilt();
    relay = await startRelay({ env: { RELAY_CHECKPOINT_PUBLISH_SECONDS: '0' } });
    await pairPhone(relay).then((p) => p.phone.close());
    while (relay.loop.models.connections.count() > 0) await new Promise((r) => setTimeout(r, 10));
    await relay.loop.drain();
    logVkey = (await svc(['relay', 'events', 'vkey'], { SVC_HOME: relay.home })).stdout.trim();
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await relay?.close();
  });

  it('serves and pulls from one home: a push sees the tree a round cosigned; SIGINT stops it with exit 0', async () => {
    const home = tempHome();
    await svc(['relay', 'witness', '--home', home, '--name', 'witness.test/both', '--print-vkey']);
    const p = spawnSvc(
      ['relay', 'witness', '--home', home, '--log-vkey', logVkey, '--listen', '127.0.0.1:0', '--relay', relay.url, '--interval', '1'],
      { NO_COLOR: '1' },
    );
    running.push(p);
    const size = relay.loop.lastSeq;
    await until(
      () => new RegExp(`cosigned  \\S+ tree size ${size} \\(first checkpoint seen\\)`).test(p.stdout()),
      () => p.stdout() + p.stderr(),
    );
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(p.stdout())![1];
    const cp = await (await fetch(`${relay.url}/log/checkpoint`)).text();
    const stale = await fetch(`${url}/add-checkpoint`, { method: 'POST', body: `old 0\n\n${cp}` });
    expect([stale.status, stale.headers.get('content-type'), await stale.text()]).toEqual([409, 'text/x.tlog.size', `${size}\n`]);
    const same = await fetch(`${url}/add-checkpoint`, { method: 'POST', body: `old ${size}\n\n${cp}` });
    expect(same.status).toBe(200);
    expect(await same.text()).toMatch(/^\u2014 witness\.test\/both \S+\n$/);
    expect(fs.readFileSync(path.join(home, 'serve.pid'), 'utf8').trim()).toBe(String(p.child.pid));
    p.child.kill('SIGINT');
    expect(await p.exited).toEqual({ code: 0, signal: null });
    expect(p.stderr()).toContain('witness: stopped (exit 0)');
    expect(p.stderr()).not.toContain('WITNESS REFUSED');
    expect(fs.existsSync(path.join(home, 'serve.pid'))).toBe(false);
  });

  it('refuses a bad --listen, and --listen with --relay but no --interval, as usage errors', async () => {
    const home = tempHome();
    await svc(['relay', 'witness', '--home', home, '--name', 'witness.test/usage', '--print-vkey']);
    for (const bad of ['8780', ':8780', '127.0.0.1:', '127.0.0.1:65536', '127.0.0.1:80x', 'a b:1', '[::1:1']) {
      const r = await svc(['relay', 'witness', '--home', home, '--log-vkey', logVkey, '--listen', bad]);
      expect([bad, r.code]).toEqual([bad, 2]);
      expect(r.stderr).toContain('--listen HOST:PORT');
    }
    const r = await svc(['relay', 'witness', '--home', home, '--log-vkey', logVkey, '--listen', '127.0.0.1:0', '--relay', relay.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--interval');
    // A home that never kept the log's key has nothing to trust yet.
    const none = await svc(['relay', 'witness', '--home', home, '--listen', '127.0.0.1:0']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--log-vkey');
  });

  it('says when the address cannot be bound (exit 1), and leaves the home free', async () => {
    const home = tempHome();
    await svc(['relay', 'witness', '--home', home, '--name', 'witness.test/busy', '--print-vkey']);
    const port = Number(new URL(relay.url).port);
    const r = await svc(['relay', 'witness', '--home', home, '--log-vkey', logVkey, '--listen', `127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('EADDRINUSE');
    expect(fs.existsSync(path.join(home, 'serve.pid'))).toBe(false);
  });
});
