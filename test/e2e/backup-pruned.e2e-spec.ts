import * as fs from 'node:fs';
import * as path from 'node:path';
import { svc } from '../support/cli';
import { startRelay, tempHome } from '../support/harness';
import { prunedHome, SMALL_SEGMENTS } from '../support/pruned-home';

/**
 * A backup of a pruned home (issues 37.4, 37.5): it carries the cut's signed checkpoint
 * (relay/checkpoints/), and the restored home's log starts at the cut, verifies from there, holds that
 * checkpoint, and starts.
 */
jest.setTimeout(90_000);

describe('svc relay backup of a pruned home', () => {
  it('carries relay/checkpoints/, restores, verifies from the cut and starts', async () => {
    const h = await prunedHome();
    const out = path.join(tempHome(), 'pruned.backup');
    const backup = await svc(['relay', 'backup', '--out', out, '--json'], { SVC_HOME: h.home });
    expect([backup.code, backup.stderr]).toEqual([0, '']);

    const home = path.join(tempHome(), 'restored');
    const restored = await svc(['relay', 'restore', out, '--home', home]);
    expect([restored.code, restored.stderr]).toEqual([0, '']);
    const rel = path.relative(h.home, h.checkpoint);
    expect(rel.startsWith(path.join('relay', 'checkpoints') + path.sep)).toBe(true);
    expect(fs.readFileSync(path.join(home, rel))).toEqual(fs.readFileSync(h.checkpoint));

    const verified = await svc(['relay', 'events', 'verify', '--checkpoint', path.join(home, rel)], { SVC_HOME: home });
    expect([verified.code, verified.stderr]).toEqual([0, '']);
    expect(verified.stdout).toContain(`verified from seq ${h.cut.seq + 1} (cut at seq ${h.cut.seq}`);

    const relay = await startRelay({ home, clock: h.clock, config: SMALL_SEGMENTS });
    try {
      expect(relay.loop.cut).toMatchObject({ cutSeq: h.cut.seq, cutHash: h.cut.hash });
    } finally {
      await relay.close('test');
    }
  });
});
