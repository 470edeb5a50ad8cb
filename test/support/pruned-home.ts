import { ManualClock } from '../../apps/relay/src/common/loop/clock';
import { svc } from './cli';
import { nextCode, registerCode, startRelay } from './harness';

const DAY = 86_400;
/** Segments this small roll every few events, so a few days of history make several to prune. */
export const SMALL_SEGMENTS = { segmentBytes: 2048 };

export type PrunedHome = { home: string; clock: ManualClock; cut: { seq: number; hash: string }; checkpoint: string; segments: string[] };

/**
 * A stopped relay's home whose log was pruned by `svc relay events prune` (as log-prune.e2e-spec does it):
 * `days` days of pairing-code registrations on a manual clock, then every whole segment before day 5 dropped,
 * or moved to `archive` when given.
 */
export async function prunedHome(opts: { days?: number; archive?: string; env?: Record<string, string> } = {}): Promise<PrunedHome> {
  const clock = new ManualClock('2026-01-01T00:00:00.000Z');
  const relay = await startRelay({ clock, config: SMALL_SEGMENTS, env: opts.env });
  for (let d = 0; d < (opts.days ?? 8); d++) {
    for (let i = 0; i < 3; i++) expect((await registerCode(relay, nextCode())).status).toBe(200);
    clock.advanceSeconds(DAY);
  }
  await relay.close('history written');
  const args = ['relay', 'events', 'prune', '--before', '2026-01-05T00:00:00Z', '--yes', '--json'];
  const run = await svc(opts.archive ? [...args, '--archive', opts.archive] : args, { SVC_HOME: relay.home, ...opts.env });
  if (run.code !== 0) throw new Error(`prune failed: ${run.stderr}`);
  const r = JSON.parse(run.stdout) as { cut: { seq: number; hash: string }; checkpoint: string; segments: string[] };
  if (r.segments.length === 0) throw new Error('prune dropped no segment');
  return { home: relay.home, clock, cut: r.cut, checkpoint: r.checkpoint, segments: r.segments };
}
