import { useState } from 'react';
import type { PairingCodeRow } from '@svc/console-api';
import { Ago, Button, Card, EmptyState, InlineError } from '@/components/ui';
import { useApproveRequest } from '../api/approve-request';
import { useDenyRequest } from '../api/deny-request';
import { Countdown } from './countdown';
import { TTL_OPTIONS, defaultTtl } from './terms';

/** Public `POST /pairing` requests: a code that works only once approved here. */
export function PendingRequests({ rows, tls }: { rows: PairingCodeRow[]; tls: boolean }) {
  return (
    <Card title={`Waiting for approval${rows.length ? ` (${rows.length})` : ''}`}>
      {rows.length === 0 ? (
        <EmptyState title="No pending requests">
          A phone that asks to pair from the app waits here until you approve or deny it. Requests expire after 10 minutes.
        </EmptyState>
      ) : (
        <ul className="request-list">
          {rows.map((r) => (
            <RequestRow key={r.request_id} row={r} tls={tls} />
          ))}
        </ul>
      )}
    </Card>
  );
}

function RequestRow({ row, tls }: { row: PairingCodeRow; tls: boolean }) {
  const approve = useApproveRequest();
  const deny = useDenyRequest();
  const [ttl, setTtl] = useState(defaultTtl(tls));
  const id = row.request_id!;
  return (
    <li className="request" data-request={id}>
      <div className="request-who">
        <div className="strong">{row.device_name ?? 'Unnamed device'}</div>
        <div className="muted small">
          from <span className="mono">{row.ip}</span> · asked <Ago at={row.created_at} /> · expires in <Countdown expiresAt={row.expires_at} />
        </div>
        <div className="muted small mono">
          request {id.slice(0, 8)} · code ref {row.code_ref}
        </div>
      </div>
      <div className="request-actions">
        <select value={ttl} onChange={(e) => setTtl(Number(e.target.value))} aria-label={`Session lifetime for ${row.device_name ?? 'this device'}`}>
          {TTL_OPTIONS.map((o) => (
            <option key={o.seconds} value={o.seconds}>
              {o.label}
            </option>
          ))}
        </select>
        <Button
          variant="primary"
          size="sm"
          busy={approve.isPending}
          disabled={deny.isPending}
          onClick={() => approve.mutate({ request_id: id, ttl_seconds: ttl })}
        >
          Approve
        </Button>
        <Button variant="danger" size="sm" busy={deny.isPending} disabled={approve.isPending} onClick={() => deny.mutate({ request_id: id })}>
          Deny
        </Button>
      </div>
      <InlineError error={approve.error ?? deny.error} />
    </li>
  );
}
