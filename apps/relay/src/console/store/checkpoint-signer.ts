import type { CheckpointKeyView, CheckpointMade } from '@svc/console-api';
import { DomainError, epoch } from '@svc/domain';
import type { Clock } from '../../common/loop/clock';
import type { CommandLoop } from '../../common/loop/command-loop';
import { signTreeHead, type LogIdentity } from '../../transparency/log-identity';
import type { TransparencyService } from '../../transparency/transparency.service';

/**
 * The Store page's checkpoints: the relay's key (made on first use under the home, the same file the CLI
 * signs with) and a C2SP checkpoint of the loop's durable head, signed as a note (issue 39: the form
 * `svc relay events checkpoint` writes; the page offers no other). Each signing is recorded as an event,
 * durable before the checkpoint is handed over; the signature itself stays with whoever downloads it.
 */
export class CheckpointSigner {
  constructor(
    private readonly log: TransparencyService,
    private readonly loop: CommandLoop,
    private readonly clock: Clock,
  ) {}

  view(): CheckpointKeyView {
    const id = this.id();
    return {
      ok: true,
      server_time: epoch(this.clock.now().getTime()),
      algorithm: 'ed25519',
      public_key: id.key.publicKeyText,
      key_id: id.key.keyId,
      vkey: id.vkey,
    };
  }

  async sign(): Promise<CheckpointMade> {
    if (this.loop.lastSeq < 1) throw new DomainError('store.log_empty', 'conflict', 'the log is empty: there is no record to sign yet');
    const tree = await this.log.ready();
    // Read in one turn after the tree: it follows the durable records synchronously, so it holds the head.
    const head = { seq: this.loop.lastSeq, hash: this.loop.lastHash };
    if (tree.size !== head.seq)
      throw new DomainError('log.tree_unavailable', 'unavailable', "the transparency log's tree is catching up with the log: try again");
    const id = this.id();
    const root = tree.root();
    const note = signTreeHead(id, head.seq, root);
    await this.loop.record('operator', [
      { type: 'store.checkpoint_signed', data: { seq: head.seq, hash: head.hash, keyId: id.key.keyId, by: 'operator' } },
    ]);
    return {
      ok: true,
      form: 'c2sp-note',
      note,
      origin: id.origin,
      size: head.seq,
      root: root.toString('base64'),
      key_id: id.key.keyId,
      vkey: id.vkey,
      file_name: `svc-checkpoint-${head.seq}.txt`,
    };
  }

  private id(): LogIdentity {
    try {
      return this.log.id();
    } catch (err) {
      throw new DomainError('store.checkpoint_key_unusable', 'unavailable', `the checkpoint key cannot be used: ${(err as Error).message}`);
    }
  }
}
