import type { CheckpointKeyView, CheckpointMade } from '@svc/console-api';
import { DomainError, epoch } from '@svc/domain';
import { signCheckpoint } from '@svc/events/checkpoint';
import type { Clock } from '../../common/loop/clock';
import { loadCheckpointKey, type CheckpointKey } from '../../common/loop/checkpoint-key';
import type { CommandLoop } from '../../common/loop/command-loop';

/**
 * The Store page's checkpoints: the relay's key (made on first use under the home, the same file the CLI
 * signs with) and a signature over the loop's durable head. Each signing is recorded as an event, durable
 * before the checkpoint is handed over; the signature itself stays with whoever downloads it.
 */
export class CheckpointSigner {
  private cached: CheckpointKey | null = null;

  constructor(
    private readonly svcHome: string,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
  ) {}

  view(): CheckpointKeyView {
    const key = this.key();
    return { ok: true, server_time: epoch(this.clock.now().getTime()), algorithm: 'ed25519', public_key: key.publicKeyText, key_id: key.keyId };
  }

  async sign(): Promise<CheckpointMade> {
    // Both read in one turn of the loop: the seq and hash of the same durable record.
    const head = { seq: this.loop.lastSeq, hash: this.loop.lastHash };
    if (head.seq < 1) throw new DomainError('store.log_empty', 'conflict', 'the log is empty: there is no record to sign yet');
    const key = this.key();
    const checkpoint = signCheckpoint(head, this.clock.now().toISOString(), key.privateKey, key.publicKey);
    await this.loop.record('operator', [
      { type: 'store.checkpoint_signed', data: { seq: checkpoint.seq, hash: checkpoint.hash, keyId: checkpoint.key_id, by: 'operator' } },
    ]);
    return { ok: true, checkpoint, file_name: `svc-checkpoint-${checkpoint.seq}.json` };
  }

  private key(): CheckpointKey {
    if (this.cached) return this.cached;
    try {
      this.cached = loadCheckpointKey(this.svcHome, { create: true })!;
    } catch (err) {
      throw new DomainError('store.checkpoint_key_unusable', 'unavailable', `the checkpoint key cannot be used: ${(err as Error).message}`);
    }
    return this.cached;
  }
}
