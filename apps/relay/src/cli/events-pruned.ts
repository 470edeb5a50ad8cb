import { ReadModels, upcastSnapshotState } from '@svc/domain';
import { SnapshotCipher, SnapshotStore, type RecordedCut, type Snapshot } from '@svc/events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Secrets } from '../common/auth/secrets';
import { svcHomeFrom } from '../common/config/config';
import { CliError } from './io';

/**
 * A pruned log cannot be replayed from seq 1: its state before the cut lives only in a snapshot, sealed with
 * the home's key (a MAC, which whoever holds that key can forge). Replay then starts from the latest such
 * snapshot at or after the cut and says so: a weaker proof than a replay from seq 1, which `--archive DIR`
 * (the pruned segments) still gives.
 */
export type ReplayStart = { cut: RecordedCut; snapshotSeq: number; snapshotHash: string; snapshotAt: string };

/** The home's latest usable snapshot at or after the cut, restored into fresh models. */
export function modelsFromSnapshot(env: NodeJS.ProcessEnv, cut: RecordedCut): { models: ReadModels; start: ReplayStart } {
  const relay = path.join(svcHomeFrom(env), 'relay');
  const refuse = (why: string): never => {
    throw new CliError(
      `the log starts at a cut (records up to seq ${cut.cutSeq} were pruned, recorded at seq ${cut.recordedAt}) and ${why}: ` +
        'replay it with the home it belongs to (SVC_HOME), or from seq 1 with the pruned segments: --archive DIR',
    );
  };
  if (!fs.existsSync(path.join(relay, 'secret.key'))) refuse(`${relay} holds no key to open a snapshot with`);
  const secrets = Secrets.load(relay);
  const store = new SnapshotStore(
    path.join(relay, 'snapshots'),
    (t) => secrets.mac('snapshot', t),
    2,
    new SnapshotCipher(secrets.derivedKey('snapshot-encryption')),
  );
  const snap: Snapshot<Record<string, unknown>> | null = store.latestSync<Record<string, unknown>>();
  if (!snap || snap.seq < cut.cutSeq) return refuse('no snapshot of the home at or after the cut opens under its key');
  const up = upcastSnapshotState(snap.models);
  if ('reason' in up) return refuse(`its snapshot cannot be read (${up.reason})`);
  const models = new ReadModels();
  const unusable = models.unrestorable(up.state);
  if (unusable) return refuse(`its snapshot cannot be read (${unusable})`);
  models.restore(up.state);
  return { models, start: { cut, snapshotSeq: snap.seq, snapshotHash: snap.hash, snapshotAt: snap.at } };
}
