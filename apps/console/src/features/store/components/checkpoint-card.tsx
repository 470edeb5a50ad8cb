import { useState } from 'react';
import type { CheckpointMade } from '@svc/console-api';
import { Button, Card, Chip, CopyButton, InlineError, Skeleton } from '@/components/ui';
import { count } from '@/lib/format';
import { useCheckpointKey, useMakeCheckpoint } from '../api/checkpoint';

/** The checkpoint as a file the browser saves (the signed note, the same bytes `svc relay events checkpoint` writes). */
function download(made: CheckpointMade): void {
  const blob = new Blob([made.note], { type: 'text/plain' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = made.file_name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Signed checkpoints: the verifier key an auditor keeps elsewhere, and the head of the log signed now (a C2SP signed note), as a download. */
export function CheckpointCard({ cli }: { cli: string }) {
  const key = useCheckpointKey();
  const [last, setLast] = useState<CheckpointMade | null>(null);
  const make = useMakeCheckpoint((made) => {
    setLast(made);
    download(made);
  });
  const k = key.data;
  const verify = last ? `${cli} relay events verify --checkpoint ${last.file_name} --vkey '${last.vkey}'` : null;
  return (
    <Card
      title="Signed checkpoints"
      actions={
        <Button size="sm" variant="primary" onClick={() => make.mutate()} busy={make.isPending} disabled={!k} data-testid="checkpoint-make">
          Make a checkpoint
        </Button>
      }
    >
      <p className="muted">
        A checkpoint is the log&apos;s Merkle tree (its size and root hash) signed with this relay&apos;s Ed25519 key, as a C2SP signed note. Keep the
        verifier key and your checkpoints off this host: later, <code>svc relay events verify --checkpoint</code> proves the log still holds each one,
        so a history rewritten before it cannot pass, even re-chained.
      </p>
      <InlineError error={key.error} />
      {k ? (
        <dl className="checkpoint-key" data-testid="checkpoint-key">
          <dt>Verifier key</dt>
          <dd>
            <div className="command-line">
              <code className="mono" data-testid="checkpoint-vkey">
                {k.vkey}
              </code>
              <CopyButton text={k.vkey} />
            </div>
            <div className="small muted">
              signed-note verifier key, what <code>verify --vkey</code> and <code>witness --log-vkey</code> take
            </div>
          </dd>
          <dt>Public key</dt>
          <dd>
            <div className="command-line">
              <code className="mono" data-testid="checkpoint-public-key">
                {k.public_key}
              </code>
              <CopyButton text={k.public_key} />
            </div>
            <div className="small muted">Ed25519, base64 of the raw 32 bytes</div>
          </dd>
          <dt>Key id</dt>
          <dd className="mono" data-testid="checkpoint-key-id">
            {k.key_id}
          </dd>
        </dl>
      ) : key.isPending ? (
        <Skeleton lines={2} height={18} />
      ) : null}
      {last ? (
        <div className="checkpoint-made" data-testid="checkpoint-made" role="status">
          <p>
            <Chip tone="good">✓ signed</Chip> tree of {count(last.size)} records, saved as <span className="mono">{last.file_name}</span> (
            <a href="#" onClick={(e) => (e.preventDefault(), download(last))}>
              save again
            </a>
            ).
          </p>
          <div className="command-line">
            <pre className="mono checkpoint-note" data-testid="checkpoint-note">
              {last.note}
            </pre>
            <CopyButton text={last.note} />
          </div>
          {verify ? (
            <>
              <div className="small muted">Check it later from any machine with the relay&apos;s CLI</div>
              <div className="command-line">
                <code className="mono">{verify}</code>
                <CopyButton text={verify} />
              </div>
            </>
          ) : null}
        </div>
      ) : null}
      <InlineError error={make.error} />
    </Card>
  );
}
