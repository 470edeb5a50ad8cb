import { checkpointText, SIG_ED25519, signNote, vkeyText } from '@svc/events/merkle/note';
import { loadCheckpointKey, type CheckpointKey } from '../common/loop/checkpoint-key';

/**
 * Who signs the transparency log's checkpoints: the relay's checkpoint key (the one the JSON checkpoints
 * use), under the origin `svc-relay/<key id>`: stable for as long as the key is (a key is never replaced,
 * checkpoint-key.ts), and distinct between relays. The origin is also the signed-note key name.
 */
export type LogIdentity = { origin: string; key: CheckpointKey; vkey: string };

export function logIdentity(svcHome: string): LogIdentity {
  const key = loadCheckpointKey(svcHome, { create: true })!;
  const origin = `svc-relay/${key.keyId}`;
  return { origin, key, vkey: vkeyText(origin, SIG_ED25519, key.publicKey) };
}

/** The C2SP checkpoint of a tree of `size` leaves with `root`, signed as a note by the relay's key. */
export function signTreeHead(id: LogIdentity, size: number, root: Buffer): string {
  return signNote(checkpointText(id.origin, size, root), id.origin, id.key.privateKey, id.key.publicKey);
}
