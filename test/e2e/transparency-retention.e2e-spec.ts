import { listSegments } from '@svc/events';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { svc } from '../support/cli';
import { nextCode, pairPhone, registerCode, startRelay, tempHome } from '../support/harness';

/**
 * Retention and forgetting keep the transparency log provable (issue 39.7): forgetting destroys keys and
 * changes no stored byte (the root stays); a prune keeps the tree's compact range at the cut in its
 * log.pruned record, so later records and sizes still prove against a checkpoint taken before the cut,
 * by the CLI, by the relay after a restart, and by the outside script.
 */
const DAY = 86_400;
const eventsOf = (home: string) => path.join(home, 'relay', 'events');
const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'tlog-verify.mjs');

describe('a pruned and forgotten log stays provable', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let vkey: string;
  const work = tempHome();
  const kept = path.join(work, 'before.checkpoint');
  let size: number;

  beforeAll(async () => {
    const clock = new ManualClock('2026-01-01T00:00:00.000Z');
    const relay = await startRelay({ clock, config: { segmentBytes: 2048 }, env: { PHONE_ENABLED: '1' } });
    (await pairPhone(relay, { terms: { ttl_seconds: 400 * DAY } })).phone.close();
    for (let d = 0; d < 12; d++) {
      for (let i = 0; i < 3; i++) expect((await registerCode(relay, nextCode())).status).toBe(200);
      clock.advanceSeconds(DAY);
    }
    await relay.close('history written');
    home = relay.home;
    env = { SVC_HOME: home };
    vkey = (await svc(['relay', 'events', 'vkey'], env)).stdout.trim();
    expect((await svc(['relay', 'events', 'checkpoint', '--out', kept], env)).code).toBe(0);
    size = Number(fs.readFileSync(kept, 'utf8').split('\n')[1]);
  });

  it('forgetting changes no stored byte: the kept checkpoint still verifies', async () => {
    const forget = await svc(['relay', 'events', 'forget', '--before', '2026-01-20T00:00:00Z', '--yes'], env);
    expect(forget.code).toBe(0);
    const v = await svc(['relay', 'events', 'verify', '--checkpoint', kept, '--vkey', vkey, '--json'], env);
    expect(v.code).toBe(0);
    expect((JSON.parse(v.stdout) as { checkpoint: { ok: boolean } }).checkpoint.ok).toBe(true);
  });

  it('a prune keeps the compact range at the cut; later records and sizes prove against the checkpoint kept before it', async () => {
    const run = await svc(['relay', 'events', 'prune', '--before', '2026-01-08T00:00:00Z', '--yes', '--json'], env);
    expect(run.code).toBe(0);
    const cut = (JSON.parse(run.stdout) as { cut: { seq: number } }).cut.seq;
    expect(listSegments(eventsOf(home))[0].firstSeq).toBe(cut + 1);
    const pruned = fs
      .readdirSync(eventsOf(home))
      .filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) => fs.readFileSync(path.join(eventsOf(home), f), 'utf8').split('\n'))
      .filter((l) => l.includes('"type":"log.pruned"'))
      .map((l) => (JSON.parse(l) as { data: { cutTree: string[] } }).data.cutTree)[0];
    expect(pruned).toHaveLength(cut.toString(2).replace(/0/g, '').length);

    const proof = await svc(['relay', 'events', 'proof', '--seq', String(cut + 1), '--size', String(size)], env);
    expect(proof.code).toBe(0);
    const pf = path.join(work, 'incl.json');
    fs.writeFileSync(pf, proof.stdout);
    expect(spawnSync(process.execPath, [SCRIPT, 'inclusion', kept, vkey, pf], { encoding: 'utf8' }).stdout).toContain(`record of seq ${cut + 1}`);

    const after = path.join(work, 'after.checkpoint');
    expect((await svc(['relay', 'events', 'checkpoint', '--out', after], env)).code).toBe(0);
    const to = Number(fs.readFileSync(after, 'utf8').split('\n')[1]);
    const cons = await svc(['relay', 'events', 'proof', '--from', String(size), '--to', String(to)], env);
    const cf = path.join(work, 'cons.json');
    fs.writeFileSync(cf, cons.stdout);
    expect(spawnSync(process.execPath, [SCRIPT, 'consistency', kept, after, vkey, cf], { encoding: 'utf8' }).stdout).toContain('extends');
    expect((await svc(['relay', 'events', 'verify', '--checkpoint', kept, '--vkey', vkey], env)).code).toBe(0);

    // The dropped records prove nothing any more, and say why.
    const gone = await svc(['relay', 'events', 'proof', '--seq', String(cut)], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('pruned');

    // The relay builds the same tree from the pruned log at start.
    const relay = await startRelay({ home, env: { PHONE_ENABLED: '1' } });
    try {
      await relay.loop.drain();
      const mine = (await svc(['relay', 'events', 'checkpoint'], env)).stdout.split('\n').slice(0, 3);
      const served = (await (await fetch(`${relay.url}/log/checkpoint`)).text()).split('\n').slice(0, 3);
      expect(served).toEqual(mine);
    } finally {
      await relay.close();
    }
  });
});
