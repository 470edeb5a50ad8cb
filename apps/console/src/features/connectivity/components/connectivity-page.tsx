import type { ConnectivityView, RouteCandidateRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Card, Chip, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { useConnectivity } from '../api/get-connectivity';
import { PreflightCard } from './preflight-card';
import { ListenerCard, ReachCard, SecureLinkCard } from './transport-cards';

const SECURITY: Record<string, { label: string; tone: 'good' | 'warn' | 'neutral' }> = {
  pinned_tls: { label: 'pinned TLS', tone: 'good' },
  e2ee_pinned_tls: { label: 'pinned TLS inside the broker', tone: 'good' },
  tls: { label: 'TLS', tone: 'good' },
  plain: { label: 'plain', tone: 'warn' },
};

const ROUTE_COLUMNS: Array<Column<RouteCandidateRow>> = [
  {
    label: 'Route',
    render: (r) => (
      <>
        <div className="strong">
          {r.label} {r.recommended ? <Chip tone="accent">preferred</Chip> : null}
        </div>
        <div className="mono small muted">{r.role}</div>
      </>
    ),
  },
  { label: 'Address', className: 'mono', render: (r) => r.url },
  {
    label: 'Security',
    render: (r) => <Chip tone={SECURITY[r.security]?.tone ?? 'neutral'}>{SECURITY[r.security]?.label ?? r.security}</Chip>,
  },
  { label: 'Note', render: (r) => (r.note ? <span className="small">{r.note}</span> : <span className="muted">–</span>) },
];

/** One line on how phones get here now: what an operator wants to know first. */
function Headline({ c }: { c: ConnectivityView }) {
  // One span inside the banner: its flex gap would otherwise split the sentence around the address.
  if (c.secure_link.status === 'available')
    return (
      <div className="status-banner good" data-testid="connectivity-headline">
        <span>
          Phones pair and connect through Secure Link (pinned TLS) at <span className="mono">{c.secure_link.url}</span>
          {c.reach.state === 'connected' ? ', and through Reach from outside the network' : ''}.
        </span>
      </div>
    );
  return (
    <div className={`status-banner ${c.listener.tls ? 'good' : 'waiting'}`} data-testid="connectivity-headline">
      <span>
        Phones connect to <span className="mono">{c.listener.advertised_url}</span>{' '}
        {c.listener.tls ? 'over TLS.' : 'over plain ws:// (no TLS): use it on a trusted network or a VPN, or turn on Secure Link.'}
        {c.secure_link.status === 'unavailable' ? ' Secure Link is enabled but not running.' : ''}
      </span>
    </div>
  );
}

export function ConnectivityPage() {
  const q = useConnectivity();
  const c = q.data;
  return (
    <>
      <PageHeader
        title="Connectivity"
        subtitle="How phones reach this relay: its listener, Secure Link, Reach, and the routes a pairing QR carries."
      />
      {q.isError ? <ErrorState what="connectivity" error={q.error} onRetry={() => void q.refetch()} /> : null}
      {q.isPending ? <Skeleton lines={6} height={20} /> : null}
      {c ? (
        <>
          <Headline c={c} />
          <div className="conn-grid">
            <ListenerCard l={c.listener} />
            <SecureLinkCard s={c.secure_link} />
            <ReachCard r={c.reach} />
          </div>
          <Card title="Routes a pairing QR carries now">
            <p className="muted small">
              What a code minted now (on the Pairing page) gives the phone, in the order it tries them. The host's own pair command may name its API
              server differently.
            </p>
            <DataTable testId="routes" columns={ROUTE_COLUMNS} rows={c.routes} rowKey={(r) => r.role} rowProps={(r) => ({ 'data-role': r.role })} />
          </Card>
          <PreflightCard currentHost={c.secure_link.host} currentPort={c.secure_link.port} />
        </>
      ) : null}
    </>
  );
}
