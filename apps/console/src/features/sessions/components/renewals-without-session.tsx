import { useState } from 'react';
import type { RenewalWithoutSessionRow } from '@svc/console-api';
import { DataTable, type Column } from '@/components/data-table';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { Ago, Button, Card, Chip } from '@/components/ui';
import { duration, exact, plural } from '@/lib/format';
import { useServerNow } from '@/lib/server-time';
import { useEndDeviceTrust } from '../api/end-device-trust';

/**
 * Devices whose session expired but whose trusted-device renewal is still live: they come back with their
 * refresh token, without pairing, unless the renewal is ended here. Shown only when there are some.
 */
export function RenewalsWithoutSession({ rows }: { rows: RenewalWithoutSessionRow[] }) {
  const now = useServerNow(5000);
  const [ending, setEnding] = useState<RenewalWithoutSessionRow | null>(null);
  if (rows.length === 0) return null;
  const columns: Array<Column<RenewalWithoutSessionRow>> = [
    {
      label: 'Device',
      render: (r) => (
        <>
          <div className="strong mono">{r.device_id}</div>
          <div className="muted small">
            last session <span className="mono">{r.token_prefix}</span> (expired){r.adopted ? ' · adopted' : ''}
          </div>
        </>
      ),
    },
    {
      label: 'Renewal',
      className: 'nowrap',
      cellProps: () => ({ 'data-testid': 'renewal' }),
      render: (r) => (
        <>
          <span title={exact(r.expires_at * 1000)}>until {duration(r.expires_at - now / 1000)}</span>
          <div className="muted small">
            {plural(r.renewals, 'renewal')}
            {r.last_renewed_at !== null ? (
              <>
                {' '}
                · last <Ago at={r.last_renewed_at} />
              </>
            ) : null}
          </div>
        </>
      ),
    },
    { label: 'Issued', className: 'nowrap', render: (r) => <Ago at={r.issued_at} /> },
    {
      label: 'Actions',
      srOnly: true,
      className: 'row-actions',
      render: (r) => (
        <Button size="sm" variant="danger" onClick={() => setEnding(r)} aria-label={`End renewal of ${r.device_id}`}>
          End renewal
        </Button>
      ),
    },
  ];
  return (
    <Card
      title={
        <>
          Renewal without a live session <Chip tone="warn">{rows.length}</Chip>
        </>
      }
    >
      <p className="muted small card-note">
        Their session expired, but they may renew it with their refresh token the next time they connect, without pairing. End a renewal to make the
        device pair again.
      </p>
      <DataTable
        testId="renewals-without-session"
        columns={columns}
        rows={rows}
        rowKey={(r) => r.device_id}
        rowProps={(r) => ({ 'data-device': r.device_id })}
      />
      <EndDeviceTrustDialog row={ending} onClose={() => setEnding(null)} />
    </Card>
  );
}

function EndDeviceTrustDialog({ row, onClose }: { row: RenewalWithoutSessionRow | null; onClose: () => void }) {
  const end = useEndDeviceTrust();
  return (
    <ConfirmDialog
      item={row}
      title="End this device's renewal?"
      action="End renewal"
      testId="confirm-end-device-trust"
      mutation={end}
      keyOf={(r) => r.device_id}
      onClose={onClose}
    >
      {(r) => (
        <p>
          <strong className="mono">{r.device_id}</strong> has no live session. Its refresh token stops working at once: to use the relay again it must
          pair with a new code.
        </p>
      )}
    </ConfirmDialog>
  );
}
