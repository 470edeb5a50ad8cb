import type { PairingCodeRow } from '@svc/console-api';
import { Ago, Card, Chip, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { usePairing } from '../api/get-pairing';
import { Countdown } from './countdown';
import { MintPanel } from './mint-panel';
import { PendingRequests } from './pending-requests';
import { RateLimitBlocks } from './rate-limit-blocks';
import { ttlLabel } from './terms';

const SOURCE: Record<PairingCodeRow['source'], string> = {
  mint: 'minted',
  register: 'registered by a host tool',
  env: 'RELAY_PAIRING_CODE',
  public: 'approved request',
};

export function PairingPage() {
  const q = usePairing();
  const tls = q.data?.tls ?? false;
  const secureLink = q.data?.secure_link ?? false;
  return (
    <>
      <PageHeader title="Pairing" subtitle="Mint a one-time code for a phone, or decide on phones that asked to pair." />
      {q.isError ? <ErrorState what="pairing state" error={q.error} onRetry={() => void q.refetch()} /> : null}
      <div className="pairing-grid">
        <MintPanel tls={tls} secureLink={secureLink} />
        <div className="stack">
          <RateLimitBlocks placement="first" />
          {q.isPending ? (
            <Card title="Waiting for approval">
              <Skeleton lines={3} />
            </Card>
          ) : q.data ? (
            <PendingRequests rows={q.data.pending} tls={tls || secureLink} />
          ) : null}
          <Card title="Codes waiting for a phone">
            {q.isPending ? <Skeleton lines={2} /> : null}
            {q.data && q.data.ready.length === 0 ? (
              <EmptyState title="No unused codes">Codes you mint or approve wait here until a phone uses them.</EmptyState>
            ) : null}
            {q.data && q.data.ready.length > 0 ? (
              <ul className="code-list">
                {q.data.ready.map((c) => (
                  <li key={c.code_ref}>
                    <span className="mono">{c.code_ref}</span>
                    <Chip>{SOURCE[c.source]}</Chip>
                    <span className="muted small">
                      {ttlLabel(c.session_ttl_seconds)} · made <Ago at={c.created_at} />
                    </span>
                    <span className="code-expiry">
                      <Countdown expiresAt={c.expires_at} />
                    </span>
                  </li>
                ))}
              </ul>
            ) : null}
          </Card>
          <RateLimitBlocks placement="last" />
        </div>
      </div>
    </>
  );
}

export function PendingBadge() {
  const q = usePairing();
  const n = q.data?.pending.length ?? 0;
  return n ? (
    <span className="nav-badge" aria-label={`${n} pending`}>
      {n}
    </span>
  ) : null;
}
