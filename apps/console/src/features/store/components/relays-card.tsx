import type { RelayMemberView } from '@svc/console-api';
import { Card, Chip, InlineError, Skeleton } from '@/components/ui';
import { DataTable, type Column } from '@/components/data-table';
import { count, duration, exact } from '@/lib/format';
import { useRelays } from '../api/relays';

function seen(r: RelayMemberView) {
  if (r.stale) return <Chip tone="bad">not seen for {duration(r.seen_seconds_ago)}</Chip>;
  return <span className="muted">{r.seen_seconds_ago < 5 ? 'just now' : `${duration(r.seen_seconds_ago)} ago`}</span>;
}

const COLUMNS: Array<Column<RelayMemberView>> = [
  {
    label: 'Relay',
    render: (r) => (
      <>
        <span className="mono">{r.name}</span>
        {r.self ? <span className="muted small"> (this one)</span> : null}
        {r.url ? <div className="small muted mono relays-url">{r.url}</div> : null}
      </>
    ),
  },
  {
    label: 'Role',
    render: (r) => <Chip tone={r.role === 'leader' && !r.stale ? 'good' : r.stale ? 'neutral' : 'info'}>{r.role}</Chip>,
    cellProps: () => ({ 'data-testid': 'relay-role' }),
  },
  { label: 'Epoch', render: (r) => (r.epoch === null ? '—' : count(r.epoch)), className: 'num', cellProps: () => ({ 'data-testid': 'relay-epoch' }) },
  { label: 'Applied', render: (r) => `#${count(r.seq)}`, className: 'num' },
  {
    label: 'Lag',
    render: (r) => (r.role === 'leader' ? <span className="muted">—</span> : `${count(r.lag_records)} records, ${count(r.lag_ms)} ms`),
    className: 'num',
  },
  { label: 'Last seen', render: seen, cellProps: () => ({ 'data-testid': 'relay-seen' }) },
];

/**
 * A hot-standby pair on one PostgreSQL database (issue 38): each relay's row in svc_relay_members, written
 * by the leader's heartbeat and the standby's follow loop, and the takeovers the log recorded.
 */
export function RelaysCard() {
  const q = useRelays();
  const v = q.data;
  return (
    <Card title="Relays">
      <p className="muted">
        The relays on this database: the leader writes the log, a hot standby follows it and takes over when the leader&apos;s session ends (
        <code>svc relay start --standby</code>). Each says it is alive every few seconds; one not seen for {v ? duration(v.stale_after_seconds) : '…'}{' '}
        stopped or lost the database, and is dropped after {v ? duration(v.forget_after_seconds) : '…'}.
      </p>
      <InlineError error={q.error} />
      {q.isPending ? <Skeleton lines={2} height={18} /> : null}
      {v && v.relays.length > 0 ? <DataTable columns={COLUMNS} rows={v.relays} rowKey={(r) => `${r.name}+${r.url ?? ''}`} testId="relays" /> : null}
      {v && v.relays.length === 0 ? <p className="small muted">No relay has reported yet.</p> : null}
      {v && v.history.length > 0 ? (
        <>
          <h3 className="small relays-history-title">Takeovers</h3>
          <ul className="relays-history" data-testid="relays-history">
            {v.history.map((h) => (
              <li key={h.seq}>
                epoch {h.previous_epoch ?? '?'} → <strong>{h.epoch ?? '?'}</strong> at {exact(h.at * 1000)}{' '}
                <span className="muted small">
                  (#{count(h.seq)}, {h.holder ?? 'unknown holder'})
                </span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </Card>
  );
}
