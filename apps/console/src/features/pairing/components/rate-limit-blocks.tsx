import type { RateLimitBlockRow } from '@svc/console-api';
import { Ago, Button, Card, Chip, EmptyState, ErrorState, InlineError, Skeleton } from '@/components/ui';
import { exact } from '@/lib/format';
import { useBlocks } from '../api/get-blocks';
import { useUnblock } from '../api/unblock';
import { Countdown } from './countdown';

const KIND: Record<RateLimitBlockRow['kind'], string> = {
  code: 'bad pairing codes',
  token: 'bad session tokens',
};

/**
 * Addresses the rate limiter refuses right now (10 bad codes in 60 s block 2 minutes; 5 bad tokens, 5
 * minutes). Unblock lifts one at once; the phone behind it may try again. Placed first on the page while
 * any block is in force (it is why a phone cannot pair), last while it only explains itself.
 */
export function RateLimitBlocks({ placement }: { placement: 'first' | 'last' }) {
  const q = useBlocks();
  const blocks = q.data?.blocks ?? [];
  if ((placement === 'first') !== blocks.length > 0) return null;
  return (
    <Card title={`Blocked addresses${blocks.length ? ` (${blocks.length})` : ''}`} id="blocks">
      {q.isPending ? <Skeleton lines={2} /> : null}
      {q.isError ? <ErrorState what="rate-limit blocks" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isSuccess && blocks.length === 0 ? (
        <EmptyState title="No address is blocked">
          An address that sends 10 wrong pairing codes in a minute is blocked for 2 minutes (5 wrong session tokens: 5 minutes). It shows here with an
          Unblock button.
        </EmptyState>
      ) : null}
      {blocks.length > 0 ? (
        <ul className="request-list" data-testid="rate-limit-blocks">
          {blocks.map((b) => (
            <BlockRow key={b.address} block={b} />
          ))}
        </ul>
      ) : null}
    </Card>
  );
}

function BlockRow({ block }: { block: RateLimitBlockRow }) {
  const unblock = useUnblock();
  return (
    <li className="request" data-address={block.address}>
      <div className="request-who">
        <div className="strong mono">{block.address}</div>
        <div className="muted small">
          <Chip tone="bad">{KIND[block.kind]}</Chip> blocked <Ago at={block.since} /> ·{' '}
          <span title={exact(block.until * 1000)}>
            lifts by itself in <Countdown expiresAt={block.until} />
          </span>
        </div>
      </div>
      <div className="request-actions">
        <Button size="sm" busy={unblock.isPending} onClick={() => unblock.mutate(block.address)} aria-label={`Unblock ${block.address}`}>
          Unblock
        </Button>
      </div>
      <InlineError error={unblock.error} />
    </li>
  );
}
