import { useEffect, useState } from 'react';
import type { SessionRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { Ago, Button, Card, Chip, Dot, EmptyState, ErrorState, PageHeader, Skeleton } from '@/components/ui';
import { duration, exact, plural } from '@/lib/format';
import { Link, useLocation } from '@/lib/router';
import { useServerNow } from '@/lib/server-time';
import { useSessions } from '../api/get-sessions';
import { GrantChips } from './grant-chips';
import { EndTrustDialog } from './end-trust-dialog';
import { PersonalContent } from './personal-content';
import { RenewalsWithoutSession } from './renewals-without-session';
import { RevokeDialog } from './revoke-dialog';
import { ShortenDialog } from './shorten-dialog';

export function DevicesPage() {
  const q = useSessions();
  const now = useServerNow(5000);
  const { params } = useLocation();
  const focus = params.get('focus');
  const [revoking, setRevoking] = useState<SessionRow | null>(null);
  const [shortening, setShortening] = useState<SessionRow | null>(null);
  const [ending, setEnding] = useState<SessionRow | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);

  useEffect(() => {
    if (focus && q.data) document.getElementById(`session-${focus}`)?.scrollIntoView({ block: 'center' });
  }, [focus, q.data]);

  const sessions = q.data?.sessions ?? [];
  const online = sessions.filter((s) => s.online).length;

  const columns: Array<Column<SessionRow>> = [
    {
      label: 'Device',
      className: 'col-device',
      render: (s) => (
        <div className="device-cell">
          <Dot on={s.online} label={s.online ? `online${s.connections[0] ? ` from ${s.connections[0].ip}` : ''}` : 'offline'} />
          <div>
            <div className="strong">{s.device_name}</div>
            <div className="muted mono small" title="device id">
              {s.device_id}
              {s.device_platform ? ` · ${s.device_platform}` : ''}
              {s.device_model ? ` · ${s.device_model}` : ''}
            </div>
            {s.client_surface !== 'unknown' || s.device_form_factor !== 'unknown' ? (
              <div className="muted small" data-testid="device-kind">
                {[s.client_surface, s.device_form_factor].filter((x) => x && x !== 'unknown').join(' · ')}
              </div>
            ) : null}
            <Link to={`/events?device=${s.token_prefix}`} className="small" aria-label={`Events of ${s.device_name}`}>
              events
            </Link>
          </div>
        </div>
      ),
    },
    {
      label: 'Token',
      className: 'nowrap',
      render: (s) => (
        <>
          <span className="mono token" title="token prefix (the full token is never shown)">
            {s.token_prefix}
          </span>
          <div className="muted small">
            paired <Ago at={s.created_at} />
          </div>
        </>
      ),
    },
    {
      label: 'Seen · transport',
      className: 'nowrap',
      cellProps: () => ({ 'data-testid': 'seen' }),
      render: (s) => (
        <>
          {s.online ? (
            <Chip tone="good">online</Chip>
          ) : s.offline_since !== null ? (
            <>
              <Chip>offline</Chip>
              <div className="small">
                since <Ago at={s.offline_since} />
              </div>
            </>
          ) : (
            <span className="small">
              last seen <Ago at={s.last_seen} />
            </span>
          )}
          {s.online && s.connections[0] ? <div className="muted small mono">{s.connections[0].ip}</div> : null}
          <div className={`small ${s.transport.startsWith('Secure') ? 'good-text' : 'muted'}`} title="transport security">
            {s.transport}
          </div>
        </>
      ),
    },
    {
      label: 'Expires',
      className: 'nowrap',
      render: (s) =>
        s.expires_at === null ? (
          <span className="muted">never</span>
        ) : (
          <span title={exact(s.expires_at * 1000)} className={s.expires_at - now / 1000 < 86400 ? 'warn-text' : undefined}>
            {s.expires_at <= now / 1000 ? 'expired' : `in ${duration(s.expires_at - now / 1000)}`}
          </span>
        ),
    },
    { label: 'Grants', className: 'col-grants', render: (s) => <GrantChips grants={s.grants} now={now} /> },
    {
      label: 'Renewal',
      className: 'nowrap',
      cellProps: () => ({ 'data-testid': 'renewal' }),
      render: (s) =>
        s.trusted_device ? (
          <>
            <span title={exact(s.trusted_device.expires_at * 1000)}>until {duration(s.trusted_device.expires_at - now / 1000)}</span>
            <div className="muted small">
              {plural(s.trusted_device.renewals, 'renewal')}
              {s.trusted_device.last_renewed_at !== null ? (
                <>
                  {' '}
                  · last <Ago at={s.trusted_device.last_renewed_at} />
                </>
              ) : null}
            </div>
          </>
        ) : (
          <span className="muted" title="the device must pair again when its session ends">
            none
          </span>
        ),
    },
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions row-actions-stack',
      render: (s) => (
        <>
          <Button size="sm" onClick={() => setShortening(s)} aria-label={`Shorten ${s.device_name}`}>
            Shorten
          </Button>
          {s.trusted_device ? (
            <Button size="sm" onClick={() => setEnding(s)} aria-label={`End renewal of ${s.device_name}`}>
              End renewal
            </Button>
          ) : null}
          <Button size="sm" variant="danger" onClick={() => setRevoking(s)} aria-label={`Revoke ${s.device_name}`}>
            Revoke
          </Button>
        </>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title="Devices"
        subtitle={
          q.data
            ? `${sessions.length} paired · ${online} online. Rows update live; a revoked device disappears at once.`
            : 'Paired phones and their sessions.'
        }
        actions={
          <Link to="/pairing" className="btn btn-primary btn-md">
            Pair a phone
          </Link>
        }
      />
      {revoked ? (
        <div className="status-banner good personal-done" role="status" data-testid="revoked-notice">
          <span>{revoked}</span>
          <button type="button" className="link-btn" onClick={() => setRevoked(null)}>
            Dismiss
          </button>
        </div>
      ) : null}
      <Card>
        {q.isPending ? <Skeleton lines={4} height={28} /> : null}
        {q.isError ? <ErrorState what="sessions" error={q.error} onRetry={() => void q.refetch()} /> : null}
        {q.isSuccess && sessions.length === 0 ? (
          <EmptyState
            title={q.data.renewals_without_session.length ? 'No live sessions' : 'No phones paired yet'}
            action={
              <Link to="/pairing" className="btn btn-primary btn-md">
                Pair a phone
              </Link>
            }
          >
            Mint a pairing code and scan its QR with the app; the phone shows up here the moment it connects.
          </EmptyState>
        ) : null}
        {sessions.length > 0 ? (
          <DataTable
            testId="sessions-table"
            columns={columns}
            rows={sessions}
            rowKey={(s) => s.token_prefix}
            rowProps={(s) => ({
              id: `session-${s.token_prefix}`,
              className: focus === s.token_prefix ? 'row-focus' : undefined,
              'data-prefix': s.token_prefix,
            })}
          />
        ) : null}
      </Card>
      <RenewalsWithoutSession rows={q.data?.renewals_without_session ?? []} />
      <PersonalContent />
      <RevokeDialog session={revoking} onClose={() => setRevoking(null)} onRevoked={setRevoked} />
      <ShortenDialog session={shortening} onClose={() => setShortening(null)} />
      <EndTrustDialog session={ending} onClose={() => setEnding(null)} />
    </>
  );
}
